"""Safety in the MCP proxy: stretto never calls a tool that is not a known read *now*.

Over generated tool sets (each tool hinted read, write, destructive or not at all, and vouched
read by the operator with `--reads` or not), generated flows, generated calls from the host, and
a re-annotation of one tool mid-session (the server changes its listing and sends
`notifications/tools/list_changed`), every `tools/call` the proxy itself sends the server is of
a tool that, at that moment, the server hints read-only, or leaves unhinted and the operator
vouches for. The relay is the real one, in process, between two memory channels. The property
asserts a good share of its cases made lookups and re-annotated a tool, and is shown to fail
once the engine's guard and the listing's check permit every tool.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("mcp")

from stretto_core import Stretto  # noqa: E402
from stretto_core.serve.speculator import Guard  # noqa: E402
from stretto_mcp.listing import Listing  # noqa: E402
from stretto_mcp.relay import Relay, RelayOptions  # noqa: E402
from stretto_mcp.served import Served  # noqa: E402

from proxy_support import MemoryChannel  # noqa: E402
from safety_now import assert_exercised, now_property  # noqa: E402
from test_claude_safety_property import TOOLS, Tools  # noqa: E402

WIRE = {"read": {"readOnlyHint": True}, "write": {"readOnlyHint": False},
        "destructive": {"readOnlyHint": True, "destructiveHint": True}, "none": None}


class Host(MemoryChannel):
    """The host's side: what the proxy sent it, and what it will send."""


class Server(Host):
    """A server of TOOLS whose hints can change; notes each call the proxy makes of its own,
    with the tool's hint at that moment."""

    def __init__(self, tools: Tools) -> None:
        super().__init__()
        self.tools = tools
        self.lookups: list[tuple[str, str]] = []

    def listing(self) -> list[dict[str, Any]]:
        schema = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
        return [{"name": t, "inputSchema": schema, **({"annotations": WIRE[self.tools.hints[t]]}
                                                      if WIRE[self.tools.hints[t]] else {})} for t in TOOLS]

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if "method" not in message or "id" not in message:
            return
        method, params = message["method"], message.get("params") or {}
        if method == "tools/list":
            result: dict[str, Any] = {"tools": self.listing()}
        elif method == "tools/call":
            name = params["name"]
            if str(message["id"]).startswith("stretto-"):
                self.lookups.append((name, self.tools.hints[name]))
            result = {"content": [{"type": "text", "text": json.dumps({"items": [params["arguments"]["x"] + "0", "b22"]})}],
                      "isError": False}
        else:
            result = {}
        await self.inbox.put({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def change(self, name: str, hint: str) -> None:
        self.tools.hints[name] = hint
        self.inbox.put_nowait({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})


async def answer(host: Host, request_id: int) -> None:
    for _ in range(2000):
        if any(m.get("id") == request_id for m in host.sent):
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"request {request_id} was never answered")


async def serve(flow: Any, tools: Tools, theta: float, walk: list, change: Any) -> list[tuple[str, str]]:
    host, server = Host(), Server(tools)
    stretto = Stretto(flow, store=False, harness="mcp-proxy", theta=theta, deny=sorted(tools.writes))
    served = Served(stretto, Listing(flow, reads=sorted(tools.reads), deny=sorted(tools.writes)))
    relay = Relay(host, server, served, RelayOptions(server_timeout=30))
    task = asyncio.create_task(relay.run())
    for k, (tool, value, _) in enumerate(walk):
        if change is not None and change[0] == k:
            seen = served.listing.notices
            server.change(change[1], change[2])
            for _ in range(2000):  # the proxy has read the server's notice (not a timing assert)
                if served.listing.notices > seen:
                    break
                await asyncio.sleep(0.005)
        await host.inbox.put({"jsonrpc": "2.0", "id": k + 1, "method": "tools/call",
                              "params": {"name": tool, "arguments": {"x": value}}})
        await answer(host, k + 1)
    await host.inbox.put(None)
    await asyncio.wait_for(task, 30)
    return server.lookups


def run_case(tools: Tools, flow: Any, theta: float, served: list, change: tuple) -> list[tuple[str, str]]:
    return asyncio.run(serve(flow, tools, theta, served, change))


def test_through_the_proxy_stretto_only_ever_calls_known_reads_now() -> None:
    made: list[int] = []
    changed: list[int] = []
    now_property(run_case, made, changed, examples=60)()
    assert_exercised(made, changed, least=50)


def test_the_property_catches_a_guard_that_permits_every_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Guard, "permits", lambda self, tool: True)
    monkeypatch.setattr(Listing, "refusal", lambda self, tool: None)
    with pytest.raises(AssertionError, match="looked up"):
        now_property(run_case, [], [], examples=40, expect_failure=True)()
