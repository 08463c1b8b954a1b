"""End to end: the real SDK, a scripted model playing real τ² retail test episodes, the real
environment behind the tools, and stretto served by `instrument(...)`.

Without stretto the SDK run takes every recorded LLM turn; with it, exactly the turns
`stretto replay --env` counts on the same episodes with the same flow (learned from the train
split only).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from shared_data import published_data
import openai_support  # noqa: F401 - skips cleanly without the SDK; quiets tracing

from stretto_core import read_session
from stretto_core.evaluate.scripted import EpisodePlayer, Tau2Toolset, fixture_flow, load_fixture_episodes, replay_turns
from stretto_openai_agents import runtime_of
from stretto_openai_agents.testing import OPENING, play_episode, stretto_serving

pytestmark = pytest.mark.env

EPISODES = 3


@pytest.fixture(scope="module")
def episodes() -> list[Any]:
    sessions = load_fixture_episodes("tau2/retail", "test")
    assert len(sessions) >= EPISODES
    return sessions[:EPISODES]


def play(session: Any, serve: Any = None) -> tuple[EpisodePlayer, Any]:
    player = EpisodePlayer(session)
    agent = asyncio.run(play_episode(player, Tau2Toolset(session), session.header.session_id, serve=serve))
    return player, agent


@published_data
def test_without_stretto_the_sdk_run_takes_every_recorded_turn(episodes: list[Any]) -> None:
    players = [play(s)[0] for s in episodes]
    without, _ = replay_turns(fixture_flow("tau2/retail"), episodes)
    assert [p.llm_turns for p in players] == [p.recorded_turns for p in players]
    assert sum(p.llm_turns for p in players) == without


@published_data
def test_with_stretto_the_sdk_run_takes_the_turns_the_environment_replay_counts(episodes: list[Any],
                                                                                tmp_path: Any) -> None:
    flow = fixture_flow("tau2/retail")
    runs = [play(s, stretto_serving(flow, tmp_path)) for s in episodes]
    without, with_stretto = replay_turns(flow, episodes)
    assert sum(p.llm_turns for p, _ in runs) == with_stretto < without
    lookups = [lk for _, agent in runs for live in runtime_of(agent).sessions for lk in live.lookups]
    assert lookups and all(not lk.error for lk in lookups)
    # One recorded session per episode (its user messages were several runs of one conversation).
    for session, (player, agent) in zip(episodes, runs):
        [live] = runtime_of(agent).sessions
        recorded = read_session(live.recorder.path)
        assert recorded.header.harness == "openai-agents"
        assert len(recorded.llm_turns()) == player.llm_turns + player.closing_turns
        said = [e.text for e in session.events if e.kind == "user"]
        if session.events[0].kind != "user":  # the agent spoke first: its run had no user text
            said.insert(0, OPENING)
        assert [e.text for e in recorded.events if e.kind == "user"] == said
