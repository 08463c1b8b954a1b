"""The Claude hooks decide on the listing as it is now: a tool the in-process server re-annotates
destructive mid-session is never looked up after the change, and a listing that cannot be read
in time means no lookup at all (issue 26, item 3).

The server is a real low-level `mcp.server.Server` whose tool annotations the test changes
between two tool calls, as a server would after sending `notifications/tools/list_changed`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from claude_shop import customer_json, flow_then, order_json

pytest.importorskip("claude_agent_sdk")

from mcp.server import Server  # noqa: E402
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool, ToolAnnotations  # noqa: E402

from stretto_claude import claude_hooks  # noqa: E402


class ChangingShop:
    """`get_order` and `get_customer`, both read-only until `turn_destructive()`; `list_mode` makes
    `tools/list` answer normally, hang or fail."""

    def __init__(self) -> None:
        self.customer_read_only = True
        self.list_mode = "ok"
        self.calls: list[str] = []

    def turn_destructive(self) -> None:
        self.customer_read_only = False

    def tools(self) -> list[Tool]:
        schema = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
        customer = {"type": "object", "properties": {"customer_id": {"type": "string"}}, "required": ["customer_id"]}
        hint = ToolAnnotations(readOnlyHint=True) if self.customer_read_only else \
            ToolAnnotations(readOnlyHint=False, destructiveHint=True)
        return [Tool(name="get_order", inputSchema=schema, annotations=ToolAnnotations(readOnlyHint=True)),
                Tool(name="get_customer", inputSchema=customer, annotations=hint)]

    def server(self) -> dict[str, Any]:
        async def on_list_tools(ctx: Any, params: Any) -> ListToolsResult:
            if self.list_mode == "hang":
                await asyncio.Event().wait()
            if self.list_mode == "fail":
                raise RuntimeError("listing is broken")
            return ListToolsResult(tools=self.tools())

        async def on_call_tool(ctx: Any, params: Any) -> CallToolResult:
            self.calls.append(params.name)
            args = params.arguments or {}
            text = order_json(args["order_id"]) if params.name == "get_order" else customer_json(args["customer_id"])
            return CallToolResult(content=[TextContent(type="text", text=text)])

        server = Server("shop", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
        return {"type": "sdk", "name": "shop", "instance": server}


def order_call(order_id: str, k: int) -> dict[str, Any]:
    return {"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "mcp__shop__get_order",
            "tool_use_id": f"t{k}", "tool_input": {"order_id": order_id},
            "tool_response": [{"type": "text", "text": order_json(order_id)}]}


def serve_two_orders(shop: ChangingShop, between: str) -> tuple[Any, list[dict[str, Any]]]:
    """Two `get_order` results through the hooks; `between` changes the shop after the first."""
    hooks = claude_hooks(flow_then("get_customer"), mcp_servers={"shop": shop.server()}, store=False,
                         lookup_timeout=0.5)

    async def run() -> list[dict[str, Any]]:
        first = await hooks.on_post_tool_use(order_call("O1", 1), "t1", None)
        if between == "destructive":
            shop.turn_destructive()
        elif between in ("hang", "fail"):
            shop.list_mode = between
        second = await asyncio.wait_for(hooks.on_post_tool_use(order_call("O2", 2), "t2", None), 5)
        shop.list_mode = "ok"
        await hooks.aclose()
        return [first, second]

    return hooks, asyncio.run(run())


def test_an_unchanged_listing_looks_up_the_customer_after_each_order() -> None:
    shop = ChangingShop()
    hooks, outs = serve_two_orders(shop, between="nothing")
    assert shop.calls == ["get_customer", "get_customer"]
    assert "C2" in json.dumps(outs[1])


def test_a_tool_re_annotated_destructive_is_never_looked_up_after_the_change() -> None:
    shop = ChangingShop()
    hooks, outs = serve_two_orders(shop, between="destructive")
    assert shop.calls == ["get_customer"], "looked up get_customer after it was re-annotated destructive"
    [live] = hooks.sessions.values()
    assert [lk.arguments for lk in live.lookups] == [{"customer_id": "C1"}]
    assert not live.tools.is_read("get_customer")
    assert "C2" not in json.dumps(outs[1]) or outs[1] == {}


@pytest.mark.parametrize("mode", ["hang", "fail"])
def test_a_listing_that_cannot_be_read_in_time_means_no_lookup(mode: str) -> None:
    shop = ChangingShop()
    hooks, outs = serve_two_orders(shop, between=mode)
    assert shop.calls == ["get_customer"]
    assert outs[1] == {} or "get_customer" not in json.dumps(outs[1])
