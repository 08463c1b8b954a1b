"""End to end: a real `create_agent` over real τ² retail test episodes counts what the replay counts.

The scripted model plays each recorded episode (the kit's `EpisodePlayer`), the episode's real
environment runs behind `StructuredTool`s, and `StrettoMiddleware` serves the flow learned from
the retail train split. Without stretto the agent takes every recorded turn; with it, exactly
the turns `stretto replay --env` says it would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shared_data import published_data

from langgraph_support import MODES, run_episode, session_files
from stretto_core.evaluate.scripted import fixture_flow, load_fixture_episodes, replay_turns
from stretto_core.sessions.model import Lookup

pytestmark = pytest.mark.env


@pytest.fixture(scope="module")
def episodes():
    sessions = load_fixture_episodes("tau2/retail", split="test")[:3]
    assert len(sessions) == 3
    return sessions


@pytest.fixture(scope="module")
def flow():
    return fixture_flow("tau2/retail")


@pytest.fixture(scope="module")
def replayed(flow, episodes) -> tuple[int, int]:
    return replay_turns(flow, episodes)


@pytest.mark.parametrize("mode", MODES)
@published_data
def test_without_stretto_the_agent_takes_every_recorded_turn(episodes, replayed, mode: str) -> None:
    runs = [run_episode(s, None, mode=mode) for s in episodes]
    assert [r.llm_turns for r in runs] == [r.recorded_turns for r in runs]
    assert sum(r.llm_turns for r in runs) == replayed[0]


@pytest.mark.parametrize("mode", MODES)
@published_data
def test_with_stretto_the_agent_takes_the_turns_the_environment_replay_counts(
        episodes, flow, replayed, mode: str, tmp_path: Path) -> None:
    runs = [run_episode(s, flow, mode=mode, store=tmp_path) for s in episodes]
    without, with_stretto = replayed
    assert sum(r.llm_turns for r in runs) == with_stretto < without
    assert sum(r.lookups for r in runs) >= 1
    sessions = session_files(tmp_path)
    assert len(sessions) == len(episodes) and all(s.header.harness == "langgraph" for s in sessions)
    assert {s.header.labels["thread_id"] for s in sessions} == {e.header.session_id for e in episodes}
    recorded = sum(1 for s in sessions for e in s.events if isinstance(e, Lookup))
    assert recorded == sum(r.lookups for r in runs)
