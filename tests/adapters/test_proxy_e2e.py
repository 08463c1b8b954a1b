"""A scripted agent on the real mcp Client, through the proxy, in front of τ² retail's real
environment: it makes exactly the LLM turns `stretto replay --env` counts on the episodes as a proxy
sees them (no user words, no replies: `sessions.views`), without and with the flow."""

from __future__ import annotations

import pytest

from shared_data import published_data

pytest.importorskip("mcp")
pytest.importorskip("tau2")

from stretto_core.evaluate.scripted import fixture_flow, load_fixture_episodes, replay_turns  # noqa: E402
from stretto_mcp.scripted import run_episodes  # noqa: E402


@pytest.mark.env
@published_data
def test_three_retail_episodes_through_the_proxy_make_the_turns_replay_counts(tmp_path) -> None:
    from proxy_support import read_session_files

    sessions = load_fixture_episodes("tau2/retail", split="test")[:3]
    flow = fixture_flow("tau2/retail")
    without, with_flow = replay_turns(flow, sessions, proxy_view=True)  # what a proxy sees
    plain = run_episodes(sessions, None)
    served = run_episodes(sessions, flow, tmp_path / "served")
    assert sum(r.llm_turns for r in plain) == without
    assert sum(r.llm_turns for r in served) == with_flow
    assert with_flow < without, "the flow saved no turn: the test would prove nothing"
    assert sum(r.appended for r in served) > 0 and sum(r.appended for r in plain) == 0
    recorded = read_session_files(tmp_path / "served")
    assert len(recorded) == 3 and {r.header.app for r in recorded} == {"tau2/retail"}
    assert sum(1 for r in recorded for e in r.events if e.kind == "lookup") >= sum(x.appended for x in served)
