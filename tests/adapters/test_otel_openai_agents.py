"""OpenTelemetry and the SDK's own traces in OpenAI Agents (issue 27, item 4): each lookup is one
`execute_tool` span under the OpenTelemetry span current at the agent's call, and one `custom_span`
under the SDK's `function_span` of that call."""

from __future__ import annotations

import asyncio
from typing import Any

from otel_support import assert_lookup_span, counted, lookup_spans, spans  # noqa: F401 - a fixture

from openai_support import READS, WRITES, Shop, order_then_done, scripted_agent, shop_flow

from agents import Runner, set_trace_processors, set_tracing_disabled
from agents.tracing import TracingProcessor
from opentelemetry import trace
from stretto_openai_agents import instrument


class Collected(TracingProcessor):
    """The SDK's spans, kept in memory."""

    def __init__(self) -> None:
        self.spans: list[Any] = []

    def on_trace_start(self, trace: Any) -> None: ...
    def on_trace_end(self, trace: Any) -> None: ...
    def on_span_start(self, span: Any) -> None: ...
    def on_span_end(self, span: Any) -> None:
        self.spans.append(span)
    def shutdown(self) -> None: ...
    def force_flush(self) -> None: ...


def test_a_lookup_is_an_otel_span_and_a_custom_span_of_the_sdk_under_the_triggering_call(tmp_path: Any,
                                                                                         spans) -> None:
    before = counted("used")
    shop = Shop()
    agent, _ = scripted_agent(shop.tools(), order_then_done())
    agent = instrument(agent, flow=shop_flow(), reads=READS, writes=WRITES, store=tmp_path)
    collected = Collected()
    set_trace_processors([collected])
    set_tracing_disabled(False)
    try:
        with trace.get_tracer("the app").start_as_current_span("handle request") as app_span:
            asyncio.run(Runner.run(agent, "Please refund order O5."))
    finally:
        set_tracing_disabled(True)
    assert shop.names() == ["get_order", "get_customer"]
    (lookup,) = lookup_spans(spans)
    assert_lookup_span(lookup, "get_customer", "call-1", "used")
    assert lookup.parent.span_id == app_span.get_span_context().span_id
    assert counted("used") == before + 1
    (function,) = [s for s in collected.spans if getattr(s.span_data, "type", "") == "function"
                   and s.span_data.name == "get_order"]
    (native,) = [s for s in collected.spans if getattr(s.span_data, "type", "") == "custom"]
    assert native.span_data.name == "execute_tool get_customer"
    assert native.parent_id == function.span_id and native.trace_id == function.trace_id
    assert native.span_data.data["stretto.outcome"] == "used"
    assert native.span_data.data["stretto.trigger.call_id"] == "call-1"
