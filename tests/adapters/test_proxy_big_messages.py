"""Big messages: the proxy forwards them up to its line limit (256 MiB), and one over the limit is
answered at once with a JSON-RPC error, never left waiting (issue 26, item 4)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from proxy_support import proxy_command, toy_server_command

pytest.importorskip("mcp")
from stretto_core import Stretto  # noqa: E402
from stretto_mcp import channels  # noqa: E402
from stretto_mcp.listing import Listing  # noqa: E402
from stretto_mcp.relay import Relay, RelayOptions  # noqa: E402
from stretto_mcp.scripted import same_code_env  # noqa: E402
from stretto_mcp.served import Served  # noqa: E402

MB = 1_000_000


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


class _Lines:
    """The proxy's stdout, read line by line in a thread (a 70 MB line included)."""

    def __init__(self, stream: Any) -> None:
        self.lines: list[bytes] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line)

    def answer(self, request_id: Any, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            for line in self.lines[seen:]:
                seen += 1
                message = json.loads(line)
                if message.get("id") == request_id:
                    return message
            time.sleep(0.05)
        raise AssertionError(f"no answer to {request_id!r} in {timeout} s")


def test_a_70_mb_result_and_a_70_mb_request_go_through_the_proxy(tmp_path: Path) -> None:
    command = proxy_command(toy_server_command(), "--store", str(tmp_path / "s"), "--server-timeout", "120")
    proxy = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=same_code_env())
    try:
        lines = _Lines(proxy.stdout)
        assert proxy.stdin is not None
        proxy.stdin.write(_line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        proxy.stdin.flush()
        lines.answer(0)
        proxy.stdin.write(_line({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                 "params": {"name": "big", "arguments": {"megabytes": 70}}}))
        proxy.stdin.write(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                 "params": {"name": "echo_size", "arguments": {"text": "y" * (70 * MB)}}}))
        proxy.stdin.flush()
        big = lines.answer(1)
        assert len(json.loads(big["result"]["content"][0]["text"])) == 70 * MB
        echoed = lines.answer(2)
        assert json.loads(echoed["result"]["content"][0]["text"]) == {"length": 70 * MB}
        proxy.stdin.close()
        assert proxy.wait(timeout=30) == 0
    finally:
        if proxy.poll() is None:
            proxy.kill()


def test_a_line_over_the_limit_is_skipped_with_its_id_and_the_next_message_is_read_whole() -> None:
    async def run() -> list[Any]:
        reader = asyncio.StreamReader(limit=1024)
        channel = channels._LineChannel("server", reader, writer=None)
        reader.feed_data(_line({"jsonrpc": "2.0", "id": 7, "result": {"text": "z" * 5000}}))
        reader.feed_data(_line({"result": {"text": "z" * 5000}, "jsonrpc": "2.0", "id": "r-8"}))  # id last
        reader.feed_data(_line({"jsonrpc": "2.0", "id": 9, "method": "ping"}))
        reader.feed_eof()
        return [await channel.receive() for _ in range(4)]

    first, second, third, end = asyncio.run(run())
    assert (first.message_id, first.too_long) == (7, "answer") and "limit" in first.reason
    assert (second.message_id, second.too_long) == ("r-8", "answer")
    assert third == {"jsonrpc": "2.0", "id": 9, "method": "ping"} and end is None


class _Memory:
    def __init__(self, name: str, replies: dict[str, Any] | None = None) -> None:
        self.name = name
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []
        self.replies = replies or {}

    async def receive(self) -> Any:
        return await self.inbox.get()

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if self.name == "server" and message.get("method") in self.replies:
            await self.inbox.put(self.replies[message["method"]](message))

    async def aclose(self) -> None:
        pass


def _too_long(message_id: Any, kind: str) -> Any:
    bad = channels.too_long(b'{"jsonrpc":"2.0","id":%s,' % json.dumps(message_id).encode()
                            if message_id is not None else b'{"jsonrpc":"2.0","result":{"x":"', b"xx")
    bad.too_long = kind
    return bad


async def _answered(side: _Memory, request_id: Any) -> dict[str, Any]:
    for _ in range(300):
        for message in side.sent:
            if message.get("id") == request_id and "method" not in message:
                return message
        await asyncio.sleep(0.01)
    raise AssertionError(f"{request_id!r} was never answered")


def test_a_request_over_the_limit_is_answered_at_once_and_an_answer_over_it_fails_its_request(tmp_path: Path) -> None:
    tools = {"tools": [{"name": "get_order", "inputSchema": {"type": "object"}}]}

    async def run() -> tuple[dict[str, Any], dict[str, Any], float]:
        host = _Memory("host")
        server = _Memory("server", {
            "tools/list": lambda m: {"jsonrpc": "2.0", "id": m["id"], "result": tools},
            "tools/call": lambda m: _too_long(None, "answer")})  # its ends show no id
        served = Served(Stretto(None, store=tmp_path / "s", harness="mcp-proxy"), Listing())
        relay = Relay(host, server, served, RelayOptions(server_timeout=60))
        task = asyncio.create_task(relay.run())
        started = time.monotonic()
        await host.inbox.put(_too_long(5, "request"))
        refused = await _answered(host, 5)
        await host.inbox.put({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                              "params": {"name": "get_order", "arguments": {}}})
        failed = await _answered(host, 6)
        waited = time.monotonic() - started
        await host.inbox.put(None)
        await task
        return refused, failed, waited

    refused, failed, waited = asyncio.run(run())
    assert refused["error"]["code"] == -32600 and "256 MiB" in refused["error"]["message"]
    assert failed["error"]["code"] == -32603 and "256 MiB" in failed["error"]["message"]
    assert waited < 5, "the host waited for what the proxy could not forward"


def test_the_proxy_records_a_50_000_character_result_whole(tmp_path: Path) -> None:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from proxy_support import read_session_files

    command = proxy_command(toy_server_command(), "--store", str(tmp_path / "s"))
    params = StdioServerParameters(command=command[0], args=command[1:], env=same_code_env())

    async def run() -> str:
        async with Client(params, mode="legacy") as client:
            return (await client.call_tool("big", {"megabytes": 0.05})).content[0].text

    text = anyio.run(run)
    [session] = read_session_files(tmp_path / "s")
    [result] = [e for e in session.events if e.kind == "tool_result"]
    assert len(text) == 50_002 and result.content == text and result.cut is None
