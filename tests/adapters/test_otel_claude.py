"""OpenTelemetry in the Claude Agent SDK adapter (issue 27, item 4): a lookup made from the
PostToolUse hook is one `execute_tool` span under the context current when the hook ran."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from opentelemetry import trace

from otel_support import assert_lookup_span, counted, lookup_spans, spans  # noqa: F401 - a fixture

pytest.importorskip("claude_agent_sdk")

from claude_shop import Shop, flow_then, shop_server  # noqa: E402
from stretto_claude import claude_hooks  # noqa: E402
from test_claude_units import after_get_order  # noqa: E402


def test_a_lookup_from_the_claude_hook_is_a_span_under_the_hooks_context(tmp_path: Path, spans) -> None:
    before = counted("used")
    shop = Shop()
    hooks = claude_hooks(flow_then("get_customer"), mcp_servers={"shop": shop_server(shop)}, store=tmp_path)

    async def run() -> None:
        with trace.get_tracer("the app").start_as_current_span("PostToolUse mcp__shop__get_order") as hook_span:
            await after_get_order(hooks)
        return hook_span

    hook_span = asyncio.run(run())
    assert shop.called("get_customer") == [{"customer_id": "C7"}]
    (lookup,) = lookup_spans(spans)
    assert_lookup_span(lookup, "get_customer", "toolu_1", "used")
    assert lookup.parent.span_id == hook_span.get_span_context().span_id
    assert counted("used") == before + 1
