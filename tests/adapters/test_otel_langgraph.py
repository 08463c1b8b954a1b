"""OpenTelemetry in LangGraph (issue 27, item 4): each lookup is one `execute_tool` span, a child of
the span current when the agent's tool call ran (LangGraph opens none of its own), sync and async."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry import trace

from otel_support import assert_lookup_span, counted, lookup_spans, spans  # noqa: F401 - a fixture

from langgraph_support import MODES, READS, WRITES, Shop, order_then_reply, serve_once, toy_flow


@pytest.mark.parametrize("mode", MODES)
def test_a_lookup_in_langgraph_is_a_span_under_the_tool_calls_context(mode: str, tmp_path: Path, spans) -> None:
    before = counted("used")
    shop = Shop()
    with trace.get_tracer("the app").start_as_current_span("handle request") as app_span:
        serve_once("agent", mode, shop, order_then_reply(), tmp_path, toy_flow(), reads=READS, writes=WRITES)
    (lookup,) = lookup_spans(spans)
    assert_lookup_span(lookup, "get_customer", None, "used")
    assert lookup.attributes["stretto.trigger.tool"] == "get_order"
    assert lookup.parent.span_id == app_span.get_span_context().span_id
    assert counted("used") == before + 1


class TimedShop(Shop):
    """The toy shop, noting when each tool call ran (ns since the epoch)."""

    def __init__(self, **kwargs: object) -> None:
        self.at: list[tuple[str, int]] = []
        super().__init__(**kwargs)  # type: ignore[arg-type]

    def _log(self, name: str, **args: object) -> None:
        import time

        self.at.append((name, time.time_ns()))
        super()._log(name, **args)


@pytest.mark.parametrize("mode", MODES)
def test_a_lookups_span_spans_its_own_call_not_the_time_it_was_written(mode: str, tmp_path: Path, spans) -> None:
    shop = TimedShop(customer="slow")  # the customer lookup takes 50 ms
    serve_once("agent", mode, shop, order_then_reply(), tmp_path, toy_flow(), reads=READS, writes=WRITES)
    (lookup,) = lookup_spans(spans)
    (ran,) = [t for name, t in shop.at if name == "get_customer"]
    assert lookup.start_time <= ran <= lookup.end_time
    assert lookup.end_time - lookup.start_time >= 50_000_000  # the call's own sleep, inside the span
    assert lookup.attributes["stretto.outcome.decided_by"] == "session_end"  # no write came: used at the end
