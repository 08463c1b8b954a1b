"""The built-in harness: the demo's agent served by stretto's own `LiveSession`, with no SDK.

It does what every adapter does, with nothing of an SDK's own: each customer message starts a
run, the agent's turns are recorded, its calls run on the shop, and after each result the live
session's lookups ride in that same result. `stretto demo` uses it when the OpenAI Agents SDK is
not installed (or `--harness builtin`); the SDK's run must count the same turns as this one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Iterable

from stretto_core.demo.agent import SupportAgent, new_customer
from stretto_core.demo.shop import SHOP_APP, SHOP_MANIFEST, Shop
from stretto_core.flow.ir import Flow
from stretto_core.progress import track
from stretto_core.serve.live import LiveSession, Stretto

HARNESS = "stretto-demo"
NAME = "stretto's built-in harness (no SDK)"


def serve_customers(folder: Path, customers: Iterable[int], tag: str, flow: Flow | None = None,
                    theta: float = 0.3, desc: str = "record") -> None:
    """Serve each customer (by index) once, recording one session each in `folder`;
    `flow=None` records without lookups."""
    stretto = Stretto(flow, manifest=SHOP_MANIFEST, store=folder, harness=HARNESS, agent_model="scripted",
                      app=SHOP_APP, theta=theta)
    for index in track(list(customers), desc, unit="customer"):
        shop, agent = new_customer(index)
        live = stretto.session(f"demo-{tag}-{index:03d}", task_id=str(index))
        try:
            asyncio.run(_conversation(shop, agent, live))
        finally:
            live.close()


async def _conversation(shop: Shop, agent: SupportAgent, live: LiveSession) -> None:
    async def call_tool(tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        return shop.call(tool, arguments)

    while (text := agent.customer()) is not None:
        live.user(text)
        results: list[str] = []
        while True:
            turn = agent.next_turn(results)
            live.llm_turn(turn.text, turn.calls, turn.usage)
            if not turn.calls:
                break
            results = []
            for call in turn.calls:
                content, error = shop.call(call.tool, call.arguments)
                results.append(content + await live.after_tool(call.call_id, call.tool, call.arguments, content,
                                                               call_tool, error=error))
