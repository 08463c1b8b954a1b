"""What the proxy does per call, and no more (issue 30, goal 5): an answer nothing is appended to
goes back as the server's own bytes (no re-encoding), and the listing's verdict on a tool is
derived once per listing, not before every lookup."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
import stretto_mcp.listing as listing_module  # noqa: E402
from stretto_core import Stretto  # noqa: E402
from stretto_mcp.listing import Listing  # noqa: E402
from stretto_mcp.relay import Relay, RelayOptions  # noqa: E402
from stretto_mcp.served import Served  # noqa: E402
from stretto_mcp.wire import encode, parse_line  # noqa: E402

from test_proxy_relay import Memory, _call  # noqa: E402

READ = {"readOnlyHint": True, "destructiveHint": False}
WRITE = {"readOnlyHint": False, "destructiveHint": True}


def _tool(annotations: dict[str, bool]) -> dict[str, Any]:
    return {"name": "get_order", "inputSchema": {"type": "object"}, "annotations": annotations}


class SpacedServer(Memory):
    """A server that writes its JSON with spaces (as Python's `json.dumps` does), unlike the
    compact JSON the proxy would write: a re-encoded answer shows."""

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if message.get("method") == "tools/list":
            await self.inbox.put({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [_tool(READ)]}})
        elif message.get("method") == "tools/call":
            line = ('{"jsonrpc": "2.0", "id": %s, "result": {"content": [{"type": "text", "text": "order"}], '
                    '"isError": false}}\n' % message["id"])
            await self.inbox.put(parse_line(line, line.encode()))


def test_an_answer_with_nothing_appended_reaches_the_host_as_the_very_bytes_the_server_sent(tmp_path: Path) -> None:
    async def scenario() -> tuple[bytes, dict[str, Any]]:
        host, server = Memory("host"), SpacedServer("server")
        served = Served(Stretto(None, store=tmp_path / "s", harness="mcp-proxy"), Listing())
        relay = Relay(host, server, served, RelayOptions(server_timeout=5))
        running = asyncio.create_task(relay.run())
        await host.inbox.put(_call(1))
        answer = await host.answer(1)
        await host.inbox.put(None)
        await asyncio.wait_for(running, 5)
        return encode(answer), answer

    sent, answer = asyncio.run(scenario())
    assert answer["result"]["content"] == [{"type": "text", "text": "order"}]  # no lookup: nothing appended
    assert sent == b'{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "order"}], ' \
                   b'"isError": false}}\n'


def test_asking_again_whether_a_tool_may_be_looked_up_derives_nothing_until_the_listing_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    listing = Listing(reads=["get_order"])
    listing.update([_tool(READ)])
    derived = []
    real = listing_module.manifest_from_mcp_tools
    monkeypatch.setattr(listing_module, "manifest_from_mcp_tools",
                        lambda tools: derived.append(1) or real(tools))
    assert listing.refusal("get_order") is None
    first = len(derived)
    for _ in range(5):
        assert listing.refusal("get_order") is None
    assert first > 0 and len(derived) == first


def test_a_new_listing_changes_the_verdict_at_once() -> None:
    listing = Listing()
    listing.update([_tool(READ)])
    assert listing.refusal("get_order") is None
    listing.update([_tool(WRITE)])
    assert listing.refusal("get_order") == ("marked_write", "the server marks it a write now")
    listing.changed_notice()
    assert listing.refusal("get_order")[0] == "listing_stale"
    listing.update([_tool(READ)])
    assert listing.refusal("get_order") is None
    listing.update([])
    assert listing.refusal("get_order") == ("unlisted", "the server no longer lists it")
