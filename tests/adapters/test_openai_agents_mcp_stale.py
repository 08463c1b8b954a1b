"""The OpenAI Agents MCP path decides on the listing as it is now (issue 26, item 3): after the
real stdio server re-annotates `get_customer` destructive and sends
`notifications/tools/list_changed`, stretto never looks it up again, with the SDK's tool cache
on (the notice empties it) and off (each listing is taken into the guard)."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import pytest
from openai_support import HERE, scripted_agent, served_calls, shop_flow

from agents import Runner
from agents.testing import assistant_message, function_call
from stretto_openai_agents import instrument, runtime_of


def shop_server(log: str, cache: bool) -> Any:
    from agents.mcp import MCPServerStdio

    return MCPServerStdio(params={"command": sys.executable, "args": [os.path.join(HERE, "openai_mcp_shop.py"), log]},
                          cache_tools_list=cache, name="toy-shop")


def two_orders(change: bool) -> list[Any]:
    """Read order O1, maybe re-annotate the shop, read order O2, done."""
    steps = [[function_call("get_order", {"order_id": "O1"}, call_id="call-1")]]
    if change:
        steps.append([function_call("turn_destructive", {}, call_id="call-2")])
    steps += [[function_call("get_order", {"order_id": "O2"}, call_id="call-3")], [assistant_message("Done.")]]
    return steps


def serve(tmp_path: Any, cache: bool, change: bool) -> tuple[list[str], Any]:
    log = str(tmp_path / "shop.log")
    server = shop_server(log, cache)
    agent, _ = scripted_agent([], two_orders(change), mcp_servers=[server])
    agent = instrument(agent, flow=shop_flow(), store=tmp_path)

    async def run() -> None:
        async with server:
            await Runner.run(agent, "Where are my orders O1 and O2?")

    asyncio.run(run())
    return served_calls(log), runtime_of(agent).sessions[-1]


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "uncached"])
def test_without_a_change_the_customer_is_looked_up_after_each_order(tmp_path: Any, cache: bool) -> None:
    calls, _ = serve(tmp_path, cache, change=False)
    assert calls == ["get_order", "get_customer", "get_order", "get_customer"]


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "uncached"])
def test_a_tool_re_annotated_destructive_is_never_looked_up_after_the_change(tmp_path: Any, cache: bool) -> None:
    calls, session = serve(tmp_path, cache, change=True)
    assert calls == ["get_order", "get_customer", "turn_destructive", "get_order"], calls
    assert [lk.arguments for lk in session.lookups] == [{"customer_id": "C1"}]
    assert not session.tools.is_read("get_customer")
