"""A lone surrogate escape (`"\\ud83d"`: what `JSON.stringify` writes for a cut emoji) in the
agent's own result and in a lookup's, through each adapter: the agent gets its result, and the
recorded session holds both, reading back to the same text. (The proxy: test_proxy_surrogates.py.)"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from stretto_core import read_session

CUT = "half an emoji: \ud83d"


def recorded(store: Path) -> list[Any]:
    from stretto_core.sessions.flusher import FLUSHER

    FLUSHER.flush_all()
    [path] = sorted(store.glob("*.jsonl"))
    return read_session(path).events


def held_by(events: list[Any]) -> tuple[Any, Any]:
    """The agent's first result and the first lookup; each must carry the cut emoji."""
    result = next(e for e in events if e.kind == "tool_result")
    lookup = next(e for e in events if e.kind == "lookup")
    assert result.parsed["note"] == CUT and lookup.parsed["note"] == CUT, (result, lookup)
    return result, lookup


def test_openai_agents(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    from openai_support import READS, WRITES, Shop, order_of, order_then_done, outputs_seen, scripted_agent, shop_flow

    from agents import Runner
    from stretto_openai_agents import instrument

    shop = Shop()
    tools = shop.tools()
    tools[0] = shop.tool("get_order", lambda a: json.dumps({**order_of(a["order_id"]), "note": CUT}))
    tools[1] = shop.tool("get_customer", lambda a: json.dumps({"customer_id": a["customer_id"], "note": CUT}))
    agent, model = scripted_agent(tools, order_then_done())
    agent = instrument(agent, flow=shop_flow(), reads=READS, writes=WRITES, store=tmp_path)
    asyncio.run(Runner.run(agent, "Refund order O5."))
    seen = outputs_seen(model, 1)["call-1"]
    assert json.loads(seen.split("\n")[0])["note"] == CUT and "get_customer" in seen
    held_by(recorded(tmp_path))


def test_adk(tmp_path: Path) -> None:
    pytest.importorskip("google.adk")
    from adk_support import SHOP_READS, Shop, run_app, session_file, shop_agent, shop_flow, steps
    from stretto_adk import StrettoPlugin

    shop = Shop(customer=lambda c: {"customer_id": c, "note": CUT})
    script = steps([("get_order", {"order_id": "O5"})], [("get_customer", {"customer_id": "C6"})],
                   [("refund", {"order_id": "O5"})], "done")
    agent = shop_agent(shop, script)
    plugin = StrettoPlugin(flow=shop_flow(), store=tmp_path, reads=SHOP_READS, writes=["refund"])
    asyncio.run(run_app(agent, [plugin], ["please refund order O5"]))
    assert shop.ran_tools() == ["get_order", "get_customer", "get_customer", "refund"]
    events = read_session(session_file(tmp_path)).events
    result = [e for e in events if e.kind == "tool_result" and e.tool == "get_customer"][0]
    lookup = next(e for e in events if e.kind == "lookup")
    assert result.parsed["note"] == CUT and lookup.parsed["note"] == CUT


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_langgraph(tmp_path: Path, mode: str) -> None:
    pytest.importorskip("langgraph")
    from langchain_core.tools import StructuredTool
    from langgraph_support import READS, WRITES, Shop, order_then_reply, serve_once, toy_flow

    def get_order(order_id: str) -> str:
        """Look up an order."""
        return json.dumps({"order_id": order_id, "customer_id": "C7", "status": "delivered", "note": CUT})

    def get_customer(customer_id: str) -> str:
        """Look up a customer."""
        return json.dumps({"customer_id": customer_id, "tier": "gold", "note": CUT})

    shop = Shop()
    shop.tools[0], shop.tools[1] = StructuredTool.from_function(get_order), StructuredTool.from_function(get_customer)
    messages, model, _ = serve_once("agent", mode, shop, order_then_reply(), tmp_path, toy_flow(), reads=READS,
                                    writes=WRITES)
    assert messages[-1].content == "done"
    held_by(recorded(tmp_path))


def test_claude(tmp_path: Path) -> None:
    pytest.importorskip("claude_agent_sdk")
    from claude_shop import Shop, flow_then, shop_server
    from stretto_claude import claude_hooks
    from test_claude_units import after_get_order

    shop = Shop(loyalty={"C7": "surrogate"})
    hooks = claude_hooks(flow_then("get_loyalty"), mcp_servers={"shop": shop_server(shop)}, store=tmp_path)
    order = json.dumps({"order_id": "O7", "customer_id": "C7", "status": "shipped", "note": CUT})
    out = asyncio.run(after_get_order(hooks, response=[{"type": "text", "text": order}]))
    blocks = out["hookSpecificOutput"]["updatedMCPToolOutput"]
    assert blocks[0]["text"] == order and "get_loyalty" in blocks[1]["text"]
    hooks.close()
    held_by(recorded(tmp_path))


def test_fastmcp_middleware(tmp_path: Path) -> None:
    pytest.importorskip("fastmcp")
    import anyio
    from mcp import Client
    from test_fastmcp_middleware import shop, texts

    params = shop(tmp_path)
    params.env = {**(params.env or os.environ), "TOY_CUT_EMOJI": "1"}

    async def run() -> list[str]:
        async with Client(params, mode="legacy") as client:
            return texts(await client.call_tool("get_order", {"order_id": "O1"}))

    first, appended = anyio.run(run)
    assert json.loads(first)["note"] == CUT and "get_customer" in appended
    held_by(recorded(tmp_path / "s"))


def test_a_result_text_holding_a_raw_lone_surrogate_parses_as_json() -> None:
    from stretto_core.sessions.jsonline import loads
    from stretto_core.sessions.model import parse_json_content

    text = json.dumps({"note": CUT}, ensure_ascii=False)  # the raw character, as result_text writes it
    assert loads(text) == {"note": CUT} and parse_json_content(text) == {"note": CUT}
