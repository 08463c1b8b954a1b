"""An agent SDK's own MCP client through the proxy: the OpenAI Agents SDK's `MCPServerStdio`,
a scripted model, τ² retail's real environment behind `stretto proxy`. The SDK's model makes
exactly the LLM turns `stretto replay --env` counts on the same episodes as a proxy sees them (no
user words, no replies: `sessions.views`), without and with the flow."""

from __future__ import annotations

import pytest

from shared_data import published_data

pytest.importorskip("mcp")
pytest.importorskip("tau2")
pytest.importorskip("agents")

from stretto_core.evaluate.scripted import fixture_flow, load_fixture_episodes, replay_turns  # noqa: E402
from stretto_mcp.scripted import run_episodes  # noqa: E402


@pytest.mark.env
@published_data
def test_the_openai_agents_sdk_through_the_proxy_makes_the_turns_replay_counts(tmp_path) -> None:
    from proxy_support import read_session_files

    sessions = load_fixture_episodes("tau2/retail", split="test")
    flow = fixture_flow("tau2/retail")
    without, with_flow = replay_turns(flow, sessions, proxy_view=True)  # what a proxy sees
    plain = run_episodes(sessions, None, tmp_path / "plain", host="openai-agents")
    served = run_episodes(sessions, flow, tmp_path / "served", host="openai-agents")
    assert [r.llm_turns for r in plain] == [r.recorded_turns for r in plain]
    assert sum(r.llm_turns for r in plain) == without
    assert sum(r.llm_turns for r in served) == with_flow
    assert with_flow < without, "the flow saved no turn: the test would prove nothing"
    assert sum(r.appended for r in served) > 0 and sum(r.appended for r in plain) == 0
    recorded = read_session_files(tmp_path / "served")
    assert len(recorded) == len(sessions) and {r.header.app for r in recorded} == {"tau2/retail"}
    lookups = [e for r in recorded for e in r.events if e.kind == "lookup"]
    assert len(lookups) >= sum(r.appended for r in served) and not any(e.error for e in lookups)


def test_an_unknown_host_is_refused_with_the_known_ones_named() -> None:
    with pytest.raises(ValueError, match="mcp, openai-agents"):
        run_episodes([], None, host="claude-code")
