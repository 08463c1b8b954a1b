"""The Claude hooks resolve tools by their full name: an external server's tool is never taken
for the in-process tool of the same bare name (issue 26, item 6)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from claude_shop import Shop, flow_then, shop_server
from stretto_claude import claude_hooks
from stretto_claude.names import ToolNames

pytest.importorskip("claude_agent_sdk")


def test_an_external_tool_named_like_an_in_process_one_keeps_its_full_name() -> None:
    names = ToolNames.build(["shop", "ext"], {"shop": ["find_ticket"]})
    assert names.bare("mcp__shop__find_ticket") == "find_ticket"
    assert names.bare("mcp__ext__find_ticket") == "mcp__ext__find_ticket"
    assert names.route("mcp__ext__find_ticket") is None
    assert names.bare("mcp__ext__other_tool") == "other_tool"  # no clash: recorded bare, as elsewhere


def test_an_external_servers_result_is_not_recorded_as_the_in_process_tools(tmp_path: Path) -> None:
    shop = Shop()
    hooks = claude_hooks(flow_then("get_customer"), mcp_servers={"shop": shop_server(shop),
                                                                 "ext": {"type": "stdio", "command": "ext"}},
                         store=tmp_path)

    async def run() -> dict:
        data = {"session_id": "s1", "tool_name": "mcp__ext__get_order", "tool_use_id": "t1",
                "tool_input": {"order_id": "O1"}, "tool_response": [{"type": "text", "text": json.dumps(
                    {"order_id": "O1", "customer_id": "C7"})}]}
        out = await hooks.on_post_tool_use(data, "t1", None)
        await hooks.aclose()
        return out

    out = asyncio.run(run())
    assert out == {} or "stretto" not in json.dumps(out)
    assert [call for call in shop.calls if call[0] == "get_customer"] == []
    [live] = hooks.sessions.values()
    assert [lk.tool for lk in live.lookups] == []
