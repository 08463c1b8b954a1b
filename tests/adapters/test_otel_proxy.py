"""OpenTelemetry in the proxy (issue 27, item 4): the proxy in-process in front of the toy server;
a host's call carries its span as `_meta.traceparent` (W3C), and the lookup after it is one
`execute_tool` span in that trace, a child of that span."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from otel_support import assert_lookup_span, counted, lookup_spans, spans  # noqa: F401 - a fixture

pytest.importorskip("mcp")

from proxy_support import toy_flow, toy_server_command  # noqa: E402
from stretto_mcp.run import ProxyConfig, serve  # noqa: E402

TRACE_ID, SPAN_ID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


class Host:
    """The host's side on memory: what it will say, and what it was sent."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.inbox: asyncio.Queue = asyncio.Queue()
        for message in messages:
            self.inbox.put_nowait(message)
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> Any:
        message = await self.inbox.get()
        if message is None:
            await asyncio.sleep(0.5)  # let the answers come back before the host goes
        return message

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    async def aclose(self) -> None:
        pass


def _call(request_id: int, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_a_proxy_lookup_is_a_span_under_the_hosts_traceparent(tmp_path: Path, spans) -> None:
    before = counted("used")
    host = Host([
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        _call(3, "get_order", {"order_id": "O1"}, {"traceparent": f"00-{TRACE_ID}-{SPAN_ID}-01"}),
    ])

    async def run() -> int:
        task = asyncio.create_task(serve(ProxyConfig(command=toy_server_command(), flow=toy_flow(tmp_path / "f.json"),
                                                     store=tmp_path / "sessions"), host=host))
        for _ in range(500):
            if any(m.get("id") == 3 for m in host.sent):
                break
            await asyncio.sleep(0.01)
        await host.inbox.put(_call(4, "refund", {"order_id": "O1"}))
        await host.inbox.put(None)
        return await asyncio.wait_for(task, 30)

    asyncio.run(run())
    answer = next(m for m in host.sent if m.get("id") == 3)
    assert len(answer["result"]["content"]) == 2  # the lookup was appended
    (lookup,) = lookup_spans(spans)
    assert_lookup_span(lookup, "get_customer", None, "used")
    assert format(lookup.parent.span_id, "016x") == SPAN_ID and format(lookup.context.trace_id, "032x") == TRACE_ID
    assert counted("used") == before + 1
