"""`shadow=True` means the same in every adapter: each session is recorded as mode `shadow` with
the lookups the flow would have made (`shadow_lookup` events), and the agent takes exactly the
turns it takes without stretto: nothing is called for it and nothing appended. Each adapter's own
quickstart shop, recorded, learned, then shadowed."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from examples_support import example
from stretto_core import learn_flow, load_sessions


def assert_shadowed(store: Path) -> None:
    sessions = load_sessions(store)
    assert sessions and {s.header.mode for s in sessions} == {"shadow"}
    assert all(s.header.flow_sha256 for s in sessions)
    kinds = [e.kind for s in sessions for e in s.events]
    assert "shadow_lookup" in kinds and "lookup" not in kinds
    assert all(e.appended is None for s in sessions for e in s.events if e.kind == "tool_result")


def test_openai_agents_instrument_shadow(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    shop = example("openai_agents_quickstart")
    from stretto_openai_agents import instrument

    reads, writes = ["get_order", "get_customer"], ["refund"]
    for n in range(8):
        agent = instrument(shop.shop_agent(f"O{100 + n}"), reads=reads, writes=writes, store=tmp_path / "train")
        asyncio.run(shop.conversation(agent, f"O{100 + n}"))
    flow = learn_flow(load_sessions(tmp_path / "train"))
    without = shadowed = 0
    for n in range(3):
        order = f"O{500 + n}"
        without += asyncio.run(shop.conversation(shop.shop_agent(order), order))
        agent = instrument(shop.shop_agent(order), flow=flow, reads=reads, writes=writes, store=tmp_path / "shadow",
                           shadow=True)
        shadowed += asyncio.run(shop.conversation(agent, order))
    assert shadowed == without
    assert_shadowed(tmp_path / "shadow")


def test_adk_plugin_shadow(tmp_path: Path) -> None:
    pytest.importorskip("google.adk")
    shop = example("adk_quickstart")
    from google.adk.apps import App
    from stretto_adk import StrettoPlugin

    logging.getLogger("google_adk").setLevel(logging.ERROR)
    asyncio.run(shop.run([f"please refund order O{i}" for i in range(1, 9)], lambda agent: App(
        name="shop", root_agent=agent, plugins=[StrettoPlugin(reads=shop.READS, writes=["refund"],
                                                              store=tmp_path / "train")])))
    flow = learn_flow(load_sessions(tmp_path / "train"))
    requests = [f"please refund order O{i}" for i in range(11, 14)]
    without = asyncio.run(shop.run(requests, lambda agent: App(name="shop", root_agent=agent)))
    shadowed = asyncio.run(shop.run(requests, lambda agent: App(name="shop", root_agent=agent, plugins=[
        StrettoPlugin(flow=flow, reads=shop.READS, store=tmp_path / "shadow", shadow=True)])))
    assert shadowed == without
    assert_shadowed(tmp_path / "shadow")


def test_langgraph_middleware_shadow(tmp_path: Path) -> None:
    pytest.importorskip("langchain")
    shop = example("langgraph_quickstart")
    from stretto_langgraph import StrettoMiddleware

    recorder = StrettoMiddleware(reads=shop.READS, writes=shop.WRITES, store=tmp_path / "train")
    shop.conversations([recorder], ["O1", "O2", "O3", "O4", "O5"])
    flow = learn_flow(load_sessions(tmp_path / "train"))
    orders = ["O6", "O7", "O8"]
    without, _ = shop.conversations([], orders)
    shadow = StrettoMiddleware(flow=flow, reads=shop.READS, writes=shop.WRITES, store=tmp_path / "shadow", shadow=True)
    shadowed, _ = shop.conversations([shadow], orders)
    assert shadowed == without
    assert_shadowed(tmp_path / "shadow")


def test_claude_hooks_shadow(tmp_path: Path) -> None:
    pytest.importorskip("claude_agent_sdk")
    shop = example("claude_quickstart")
    from claude_agent_sdk import ClaudeAgentOptions, query
    from stretto_claude import claude_hooks
    from stretto_claude.testing import ScriptedMessagesAPI

    async def ask(api, question: str, store: Path, **options) -> int:
        hooks = claude_hooks(mcp_servers=shop.SERVERS, store=store, **options)
        agent = ClaudeAgentOptions(hooks=hooks, mcp_servers=shop.SERVERS, allowed_tools=["mcp__shop"], tools=[],
                                   setting_sources=[], cwd=str(tmp_path), env=api.env(tmp_path / "claude"))
        before = len(api.turns)
        async for _ in hooks.watch(query(prompt=question, options=agent)):
            pass
        await hooks.aclose()
        return len(api.turns) - before

    async def scenario() -> tuple[int, int]:
        with ScriptedMessagesAPI(shop.careful_agent) as api:
            for k in (1, 2, 3):
                await ask(api, f"Where is my order O{k}?", tmp_path / "train")
            flow = learn_flow(load_sessions(tmp_path / "train"))
            without = await ask(api, "Where is my order O4?", tmp_path / "plain")
            shadowed = await ask(api, "Where is my order O4?", tmp_path / "shadow", flow=flow, shadow=True)
            return without, shadowed

    without, shadowed = asyncio.run(scenario())
    assert shadowed == without
    assert_shadowed(tmp_path / "shadow")


def test_fastmcp_middleware_shadow_by_the_environment(tmp_path: Path) -> None:
    pytest.importorskip("fastmcp")
    import anyio
    from mcp import Client
    from test_fastmcp_middleware import served, shop, texts

    params = shop(tmp_path)
    params.env = {**(params.env or {}), "STRETTO_SHADOW": "1"}

    async def run() -> list[str]:
        async with Client(params, mode="legacy") as client:
            return texts(await client.call_tool("get_order", {"order_id": "O1"}))

    assert len(anyio.run(run)) == 1, "nothing appended"
    assert served(tmp_path) == ["get_order"], "nothing looked up"
    assert_shadowed(tmp_path / "s")
