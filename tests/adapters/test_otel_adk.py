"""OpenTelemetry in ADK (issue 27, item 4): each lookup is one `execute_tool` span, a child of the
`execute_tool` span ADK opened for the agent's call that triggered it, with stretto's attributes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from otel_support import assert_lookup_span, counted, lookup_spans, spans  # noqa: F401 - a fixture

from adk_support import SHOP_READS, Shop, run_app, shop_agent, shop_flow, steps
from stretto_adk import StrettoPlugin


def test_a_lookup_in_adk_is_a_child_span_of_the_agents_own_tool_span(tmp_path: Path, spans) -> None:
    before = counted("used")
    shop = Shop()
    agent = shop_agent(shop, steps([("get_order", {"order_id": "O5"})], [("refund", {"order_id": "O5"})], "done"))
    plugin = StrettoPlugin(flow=shop_flow(), reads=SHOP_READS, writes=["refund"], store=tmp_path)
    asyncio.run(run_app(agent, [plugin], ["please refund order O5"]))
    assert shop.ran_tools() == ["get_order", "get_customer", "refund"]
    (lookup,) = lookup_spans(spans)
    assert_lookup_span(lookup, "get_customer", None, "used")
    (parent,) = [s for s in spans.get_finished_spans() if s.name == "execute_tool get_order"]
    assert lookup.parent is not None and lookup.parent.span_id == parent.context.span_id
    assert lookup.context.trace_id == parent.context.trace_id
    assert lookup.attributes["stretto.trigger.tool"] == "get_order"
    assert lookup.attributes["stretto.trigger.call_id"] == parent.attributes["gen_ai.tool.call.id"]
    assert counted("used") == before + 1
