"""A toy shop for the Claude adapter's tests: in-process MCP tools and the flows learned on them.

Reads: `get_order` (its result names the customer), `get_customer`, `get_loyalty` (which can be
told to raise, hang or return garbage for a given customer). Write: `refund`. Undeclared: `get_notes` (no hint).
A flow learned from sessions in which the agent always reads X right after an order looks up X
after every `get_order`, when the serving side lets it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from stretto_core import Flow, Session, SessionHeader, ToolCall, ToolManifest, learn_flow
from stretto_core.sessions.model import LLMTurn, ToolResult, UserMessage

SERVER = "shop"
READS = ["get_order", "get_customer", "get_loyalty"]


@dataclass
class Shop:
    """The shop's state and every call its tools received, in order."""

    loyalty: dict[str, str] = field(default_factory=dict)   # customer -> ok | raise | hang | garbage | slow | surrogate
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def called(self, tool: str) -> list[dict[str, Any]]:
        return [args for name, args in self.calls if name == tool]


def customer_of(order_id: str) -> str:
    return "C" + order_id.lstrip("O")


def order_json(order_id: str) -> str:
    return json.dumps({"order_id": order_id, "customer_id": customer_of(order_id), "status": "shipped"})


def customer_json(customer_id: str) -> str:
    return json.dumps({"customer_id": customer_id, "tier": "gold"})


def shop_server(shop: Shop) -> Any:
    """The shop as an in-process SDK MCP server (`create_sdk_mcp_server`)."""
    from claude_agent_sdk import ToolAnnotations, create_sdk_mcp_server, tool

    def text(value: str) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": value}]}

    @tool("get_order", "Look up an order", {"order_id": str}, annotations=ToolAnnotations(readOnlyHint=True))
    async def get_order(args: dict[str, Any]) -> dict[str, Any]:
        shop.calls.append(("get_order", args))
        return text(order_json(args["order_id"]))

    @tool("get_customer", "Look up a customer", {"customer_id": str},
          annotations=ToolAnnotations(readOnlyHint=True))
    async def get_customer(args: dict[str, Any]) -> dict[str, Any]:
        shop.calls.append(("get_customer", args))
        return text(customer_json(args["customer_id"]))

    @tool("get_loyalty", "A customer's loyalty points", {"customer_id": str},
          annotations=ToolAnnotations(readOnlyHint=True))
    async def get_loyalty(args: dict[str, Any]) -> Any:
        shop.calls.append(("get_loyalty", args))
        mode = shop.loyalty.get(args["customer_id"], "ok")
        if mode == "raise":
            raise RuntimeError("loyalty service is down")
        if mode == "hang":
            await asyncio.Event().wait()
        if mode == "garbage":
            return 42
        if mode == "slow":
            await asyncio.sleep(0.2)
        if mode == "surrogate":  # what JSON.stringify writes for a cut emoji
            return text(json.dumps({"customer_id": args["customer_id"], "note": "half an emoji: \ud83d"}))
        return text(json.dumps({"customer_id": args["customer_id"], "points": 120}))

    @tool("get_notes", "Notes about a customer", {"customer_id": str})
    async def get_notes(args: dict[str, Any]) -> dict[str, Any]:
        shop.calls.append(("get_notes", args))
        return text(json.dumps({"customer_id": args["customer_id"], "notes": []}))

    @tool("refund", "Refund an order", {"order_id": str}, annotations=ToolAnnotations(readOnlyHint=False))
    async def refund(args: dict[str, Any]) -> dict[str, Any]:
        shop.calls.append(("refund", args))
        return text(json.dumps({"order_id": args["order_id"], "refunded": True}))

    return create_sdk_mcp_server(SERVER, tools=[get_order, get_customer, get_loyalty, get_notes, refund])


def _argument(tool: str, order_id: str) -> dict[str, str]:
    return {"order_id": order_id} if tool in ("get_order", "refund") else {"customer_id": customer_of(order_id)}


def _result(tool: str, order_id: str) -> str:
    if tool == "get_order":
        return order_json(order_id)
    if tool == "get_customer":
        return customer_json(customer_of(order_id))
    return json.dumps({"ok": True})


def training_sessions(then: str, n: int = 12) -> list[Session]:
    """Sessions in which the agent reads an order, then calls `then` on what the order names."""
    sessions = []
    for i in range(n):
        order = f"O{100 + i}"
        events: list[Any] = [UserMessage(text=f"Where is my order {order}?")]
        for k, tool in enumerate(("get_order", then)):
            call = ToolCall(call_id=f"c{i}-{k}", tool=tool, arguments=_argument(tool, order))
            events.append(LLMTurn(calls=[call]))
            events.append(ToolResult(call_id=call.call_id, tool=tool, content=_result(tool, order)))
        events.append(LLMTurn(text="Here is what I found."))
        sessions.append(Session(header=SessionHeader(session_id=f"train-{then}-{i}", harness="elsewhere",
                                                     task_id=str(i)), events=events))
    return sessions


def flow_then(then: str, *, claims_read: bool = True) -> Flow:
    """A flow whose lookup after `get_order` is `then` (its training manifest calls it a read)."""
    reads = READS + ([then] if claims_read else [])
    manifest = ToolManifest.declare(SERVER, reads=reads, writes=[] if claims_read else [then])
    return learn_flow(training_sessions(then), manifest)
