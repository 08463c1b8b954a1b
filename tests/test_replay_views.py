"""`stretto replay --view proxy`: the episodes as an MCP proxy sees them (no user words, no
replies), each still counted with its own LLM turns, so what `stretto proxy` can save reads beside
what an adapter inside the agent saves."""

from __future__ import annotations

import json

import pytest

from shared_data import full_data, published_data
from stretto_core.cli import main
from stretto_core.errors import StrettoError
from stretto_core.evaluate.replay.episode import prepare_session
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.scripted import fixture_flow, load_fixture_episodes
from stretto_core.evaluate.scripted.episodes import FIXTURES, load_episodes
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.store import write_session

FLOW = FIXTURES / "flows" / "tau2-retail.flow.json"


def _replay(sessions, view: str):
    return replay_sessions(FlowRuntime(fixture_flow()), sessions, ReplayOptions(view=view, processes=1))


@published_data
def test_a_proxys_view_keeps_each_episodes_own_llm_turns() -> None:
    sessions = load_fixture_episodes("tau2/retail", split="test")
    agent, proxy = _replay(sessions, "agent"), _replay(sessions, "proxy")
    assert [r.llm_turns for r in proxy.episode_rows] == [r.llm_turns for r in agent.episode_rows]
    assert proxy.llm_turns == sum(len(s.llm_turns()) for s in sessions)
    assert proxy.lookups > 0, "the proxy's view made no lookup: the test would prove nothing"
    assert proxy.config.view == "proxy" and agent.config.view == "agent"


@full_data
def test_a_proxy_saves_fewer_turns_than_an_adapter_that_sees_the_users_words() -> None:
    sessions = load_episodes("tau2/retail", split="test", full=True)
    agent, proxy = _replay(sessions, "agent"), _replay(sessions, "proxy")
    assert proxy.llm_turns == agent.llm_turns
    assert 0 < proxy.turns_saved < agent.turns_saved


@published_data
def test_the_cli_replays_the_proxys_view_and_writes_it_in_the_config(tmp_path) -> None:
    sessions = load_fixture_episodes("tau2/retail", split="test")
    folder = tmp_path / "sessions"
    for session in sessions:
        write_session(session, folder)
    out = tmp_path / "replay.json"
    code = main(["replay", "--flow", str(FLOW), "--sessions", str(folder), "--view", "proxy", "--json", str(out)])
    assert code == 0
    written = json.loads(out.read_text())
    assert written["config"]["view"] == "proxy"
    assert written["llm_turns"] == sum(len(s.llm_turns()) for s in sessions)


@published_data
def test_an_unknown_view_is_refused_before_any_replay() -> None:
    session = load_fixture_episodes("tau2/retail", split="test")[0]
    with pytest.raises(StrettoError, match="view"):
        prepare_session(session, view="host")
    with pytest.raises(StrettoError, match="view"):
        ReplayOptions(view="host")
