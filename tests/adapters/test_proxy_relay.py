"""The relay in-process, on memory channels: a bug never leaves the host waiting, and the turn
estimate groups calls that overlap in time."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
from stretto_core import Stretto, ToolCall  # noqa: E402
from stretto_mcp.listing import Listing  # noqa: E402
from stretto_mcp.relay import ExitStatus, Relay, RelayOptions  # noqa: E402
from stretto_mcp.served import Served  # noqa: E402
from stretto_mcp.turns import TurnInference  # noqa: E402

from proxy_support import MemoryChannel  # noqa: E402

TOOLS = [{"name": "get_order", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}]


class Memory(MemoryChannel):
    """One side of the relay: what it is sent, and what it will say (a server answers at once)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if self.name == "server" and "method" in message and "id" in message:
            method = message["method"]
            result = {"tools": TOOLS} if method == "tools/list" else {
                "content": [{"type": "text", "text": "order"}], "isError": False} if method == "tools/call" else {}
            await self.inbox.put({"jsonrpc": "2.0", "id": message["id"], "result": result})


def _relay(tmp_path: Path) -> tuple[Relay, Memory, Memory]:
    host, server = Memory("host"), Memory("server")
    served = Served(Stretto(None, store=tmp_path / "s", harness="mcp-proxy"), Listing())
    return Relay(host, server, served, RelayOptions(server_timeout=5)), host, server


def _call(request_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "get_order", "arguments": {"order_id": "O1"}}}


def test_a_bug_while_answering_a_call_still_answers_the_host(tmp_path: Path) -> None:
    async def run() -> tuple[dict[str, Any], dict[str, Any], ExitStatus]:
        relay, host, _ = _relay(tmp_path)

        async def broken() -> None:
            raise RuntimeError("a bug")

        relay._listing_ready = broken  # type: ignore[method-assign]
        task = asyncio.create_task(relay.run())
        await host.inbox.put(_call(1))
        first = await host.answer(1)
        await host.inbox.put({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        second = await host.answer(2)  # the proxy goes on serving
        await host.inbox.put(None)
        return first, second, await task

    answer, ping, status = asyncio.run(run())
    assert ping["result"] == {}
    assert answer["error"]["code"] == -32603 and "RuntimeError" in answer["error"]["message"]
    assert status is ExitStatus.CLEAN


def test_a_bug_in_a_pump_stops_the_proxy_with_status_1_instead_of_hanging(tmp_path: Path) -> None:
    async def run() -> ExitStatus:
        relay, host, _ = _relay(tmp_path)

        def broken(*args: Any) -> None:
            raise RuntimeError("a bug")

        relay.served.arrived = broken  # type: ignore[method-assign]
        task = asyncio.create_task(relay.run())
        await host.inbox.put(_call(1))
        return await asyncio.wait_for(task, 10)

    assert asyncio.run(run()) is ExitStatus.INTERNAL


def test_calls_that_overlap_are_one_turn_and_a_call_after_the_answer_is_the_next() -> None:
    turns = TurnInference()
    a, b, c = (ToolCall(call_id=x, tool="t", arguments={}) for x in "abc")
    turns.arrived(a)
    turns.arrived(b)
    assert [x.call_id for x in turns.take_turn("a") or []] == ["a", "b"]
    assert turns.take_turn("b") is None
    turns.finished("a")
    turns.finished("b")
    turns.arrived(c)
    assert [x.call_id for x in turns.take_turn("c") or []] == ["c"]


def test_a_call_sent_while_its_turn_is_in_lookups_starts_a_new_estimated_turn() -> None:
    turns = TurnInference()
    a, b = (ToolCall(call_id=x, tool="t", arguments={}) for x in "ab")
    turns.arrived(a)
    assert turns.take_turn("a") is not None  # a's result is being recorded: its turn is written
    turns.arrived(b)
    assert [x.call_id for x in turns.take_turn("b") or []] == ["b"]
