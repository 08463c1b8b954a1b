"""One format for every harness: a flow learned from one SDK's recorded sessions serves in another.

Sessions recorded by the OpenAI Agents SDK adapter (its quickstart's shop) are learned into a
flow that then serves, unchanged, an agent built with LangChain's `create_agent` (its quickstart's
shop, the same tools): the agent takes fewer turns, and the sessions of both harnesses agree on
what they recorded.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("agents", reason='needs the openai-agents extra: pip install "stretto[openai-agents]"')
pytest.importorskip("langchain", reason='needs the langgraph extra: pip install "stretto[langgraph]"')

from examples_support import example  # noqa: E402
from stretto_core import learn_flow, load_sessions  # noqa: E402


def test_a_flow_learned_from_openai_agents_sessions_serves_a_langgraph_agent_unchanged(tmp_path: Path) -> None:
    openai_shop = example("openai_agents_quickstart")
    langgraph_shop = example("langgraph_quickstart")
    from stretto_langgraph import StrettoMiddleware
    from stretto_openai_agents import instrument

    reads, writes = ["get_order", "get_customer"], ["refund"]
    for n in range(8):
        agent = instrument(openai_shop.shop_agent(f"O{100 + n}"), reads=reads, writes=writes, store=tmp_path / "openai")
        asyncio.run(openai_shop.conversation(agent, f"O{100 + n}"))
    recorded = load_sessions(tmp_path / "openai")
    assert len(recorded) == 8 and {s.header.harness for s in recorded} == {"openai-agents"}

    flow = learn_flow(recorded)
    orders = ["O6", "O7", "O8", "O9"]
    without, _ = langgraph_shop.conversations([], orders)
    served = StrettoMiddleware(flow=flow, reads=reads, writes=writes, store=tmp_path / "langgraph")
    with_stretto, _ = langgraph_shop.conversations([served], orders)
    assert with_stretto < without

    langgraph_sessions = load_sessions(tmp_path / "langgraph")
    assert {s.header.harness for s in langgraph_sessions} == {"langgraph"}
    looked_up = [e for s in langgraph_sessions for e in s.events if e.kind == "lookup"]
    assert looked_up and {e.tool for e in looked_up} <= set(reads)
