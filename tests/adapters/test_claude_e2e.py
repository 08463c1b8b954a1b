"""End to end: real τ² retail test episodes, played by the real CLI against the real environment.

A scripted model (the kit's `EpisodePlayer`) answers the CLI's requests with the recorded turns;
the episode's real tools sit behind an in-process SDK MCP server. Without stretto the agent takes
every recorded turn; with the shipped retail flow (learned in another harness, from the train
split) it takes exactly the turns `stretto replay --env` counts on the same episodes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from shared_data import published_data

from claude_support import EpisodeResult, run_episode
from stretto_core import read_session
from stretto_core.evaluate.scripted import fixture_flow, load_fixture_episodes, replay_turns
from stretto_core.sessions.model import Lookup, ToolResult

pytestmark = pytest.mark.env
pytest.importorskip("claude_agent_sdk")
pytest.importorskip("tau2")


@pytest.fixture(scope="module")
def episodes():
    return load_fixture_episodes("tau2/retail", "test")[:3]


def play(episodes, folder: Path, flow) -> list[EpisodeResult]:
    return [asyncio.run(run_episode(s, folder / s.header.session_id, flow)) for s in episodes]


@pytest.fixture(scope="module")
def without(episodes, tmp_path_factory) -> list[EpisodeResult]:
    return play(episodes, tmp_path_factory.mktemp("without"), None)


@pytest.fixture(scope="module")
def served(episodes, tmp_path_factory) -> list[EpisodeResult]:
    return play(episodes, tmp_path_factory.mktemp("with"), fixture_flow("tau2/retail"))


def test_without_stretto_the_cli_takes_every_recorded_turn(episodes, without) -> None:
    recorded, _ = replay_turns(fixture_flow("tau2/retail"), episodes)
    assert [r.llm_turns for r in without] == [r.recorded_turns for r in without]
    assert sum(r.llm_turns for r in without) == recorded


@published_data
def test_with_stretto_the_cli_takes_the_turns_the_environment_replay_counts(episodes, served) -> None:
    recorded, with_stretto = replay_turns(fixture_flow("tau2/retail"), episodes)
    assert sum(r.llm_turns for r in served) == with_stretto < recorded
    assert sum(r.lookups for r in served) >= 1


def test_each_episode_is_one_recorded_session_under_the_tools_own_names(episodes, served) -> None:
    names = {c.tool for s in episodes for c in s.agent_calls()}
    for result in served:
        assert len(result.session_files) == 1
        session = read_session(result.session_files[0])
        assert session.header.harness == "claude-agent-sdk"
        assert {e.tool for e in session.events if isinstance(e, ToolResult)} <= names
        assert sum(isinstance(e, Lookup) for e in session.events) == result.lookups
