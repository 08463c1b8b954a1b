"""End to end: real τ² retail test episodes through ADK's Runner, the real environment behind its tools.

A scripted model plays each recorded episode (`EpisodePlayer`); ADK runs every call against the
τ²-bench environment; the plugin serves the retail flow learned from the train split. Without
the plugin ADK takes every recorded turn; with it, exactly the turns `stretto replay --env`
counts on the same episodes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from shared_data import published_data

from stretto_adk import StrettoPlugin
from stretto_adk.scripted import EpisodeRun, run_episode
from stretto_core import read_session
from stretto_core.evaluate.scripted import fixture_flow, load_fixture_episodes, replay_turns
from stretto_core.sessions.model import Lookup, LLMTurn, ToolResult, UserMessage

pytestmark = pytest.mark.env


@pytest.fixture(scope="module")
def episodes() -> list:
    sessions = load_fixture_episodes("tau2/retail", "test")
    assert len(sessions) >= 3
    return sessions[:3]


@pytest.fixture(scope="module")
def replayed(episodes: list) -> tuple[int, int]:
    return replay_turns(fixture_flow("tau2/retail"), episodes)


@pytest.fixture(scope="module")
def served(episodes: list, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[EpisodeRun], Path]:
    store = tmp_path_factory.mktemp("adk-sessions")
    plugin = StrettoPlugin(flow=fixture_flow("tau2/retail"), reads=episodes[0].header.manifest.reads(), store=store)
    return [asyncio.run(run_episode(s, [plugin])) for s in episodes], store


@published_data
def test_without_stretto_adk_takes_every_recorded_turn(episodes: list, replayed: tuple[int, int]) -> None:
    runs = [asyncio.run(run_episode(s)) for s in episodes]
    assert [r.llm_turns for r in runs] == [r.recorded_turns for r in runs]
    assert sum(r.llm_turns for r in runs) == replayed[0]
    assert all(r.lookups == 0 for r in runs)


@published_data
def test_with_stretto_adk_takes_the_turns_the_environment_replay_counts(
        served: tuple[list[EpisodeRun], Path], replayed: tuple[int, int]) -> None:
    runs, _ = served
    without, with_stretto = replayed
    assert sum(r.llm_turns for r in runs) == with_stretto < without
    assert sum(r.lookups for r in runs) > 0


@published_data
def test_each_episode_is_recorded_as_adk_ran_it(served: tuple[list[EpisodeRun], Path], episodes: list) -> None:
    runs, store = served
    files = sorted(store.glob("*.jsonl"))
    assert len(files) == len(episodes)
    for path in files:
        session = read_session(path)
        run = next(r for r in runs if r.session_id in session.session_id)
        original = next(s for s in episodes if s.session_id == run.session_id)
        assert session.header.harness == "google-adk" and session.header.agent_model == "scripted-tau2"
        users = [e.text for e in session.events if isinstance(e, UserMessage)]
        assert users == [e.text for e in original.events if isinstance(e, UserMessage)]
        turns = [e for e in session.events if isinstance(e, LLMTurn)]
        assert not any(t.inferred for t in turns) and all(t.usage is not None for t in turns)
        assert len(turns) >= run.llm_turns  # plus the closing turns a run must end with
        calls = {c.call_id for t in turns for c in t.calls}
        assert {e.call_id for e in session.events if isinstance(e, ToolResult)} == calls
        assert len([e for e in session.events if isinstance(e, Lookup)]) == run.lookups
