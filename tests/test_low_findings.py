"""Issue 26's Low findings: a planted symlink is not followed, sessions without an id are not
shared, a non-object JSON-RPC message from a host is answered, two apps' flows merge with a word."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from stretto_core import Stretto, ToolManifest
from stretto_core.cli import main
from stretto_core.flow.ir import learn, save_flow
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage


def test_a_symlink_planted_at_a_sessions_name_is_not_followed(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    store.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("")  # an empty file: one a recorder following the link would take as its own
    (store / "planted.jsonl").symlink_to(victim)
    live = Stretto(None, store=store, reads=["get_order"]).session("planted", tools=ToolManifest.declare(
        reads=["get_order"]))
    live.after_tool_sync("c1", "get_order", {}, "{}", lambda t, a: "")
    live.close()
    assert victim.read_text() == ""
    written = [p for p in store.glob("*.jsonl") if not p.is_symlink()]
    assert len(written) == 1 and "tool_result" in written[0].read_text()


def _session(app: str, i: int) -> Session:
    manifest = ToolManifest.declare(app, reads=["get_order"], writes=["refund"])
    events: list[Any] = [UserMessage(text="hi"),
                         LLMTurn(calls=[ToolCall(call_id="a", tool="get_order", arguments={"id": f"O{i}"})]),
                         ToolResult(call_id="a", tool="get_order", content="{}"), LLMTurn(text="done")]
    return Session(header=SessionHeader(session_id=f"{app}-{i}", harness="t", app=app, manifest=manifest),
                   events=events)


def test_merging_two_apps_flows_says_so(tmp_path: Path, capsys: Any) -> None:
    save_flow(learn([_session("shop", i) for i in range(3)]), tmp_path / "a.json")
    save_flow(learn([_session("mail", i) for i in range(3)]), tmp_path / "b.json")
    assert main(["flow", "merge", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "--out", str(tmp_path / "m.json")]) == 0
    err = capsys.readouterr().err
    assert "flow of shop" in err and "mail" in err


def test_a_batch_from_the_host_is_answered(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from stretto_mcp.listing import Listing
    from stretto_mcp.relay import Relay, RelayOptions
    from stretto_mcp.served import Served
    from stretto_mcp.wire import parse_line

    class Side:
        def __init__(self) -> None:
            self.inbox: asyncio.Queue = asyncio.Queue()
            self.sent: list[dict[str, Any]] = []
            self.name = "side"

        async def receive(self) -> Any:
            return await self.inbox.get()

        async def send(self, message: dict[str, Any]) -> None:
            self.sent.append(message)

        async def aclose(self) -> None:
            pass

    async def run() -> list[dict[str, Any]]:
        host, server = Side(), Side()
        relay = Relay(host, server, Served(Stretto(None, store=False), Listing()), RelayOptions(server_timeout=5))
        task = asyncio.create_task(relay.run())
        await host.inbox.put(parse_line(json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])))
        await host.inbox.put(parse_line("42"))
        for _ in range(100):
            if len(host.sent) >= 2:
                break
            await asyncio.sleep(0.01)
        await host.inbox.put(None)
        await task
        return host.sent

    sent = asyncio.run(run())
    assert [(m["id"], m["error"]["code"]) for m in sent] == [(None, -32600), (None, -32600)]


def test_claude_hook_data_without_a_session_id_shares_no_session(tmp_path: Path) -> None:
    pytest.importorskip("claude_agent_sdk")
    from stretto_claude import claude_hooks

    hooks = claude_hooks(None, mcp_servers={}, store=tmp_path, reads=["get_order"])

    async def run() -> None:
        for n in range(2):
            await hooks.on_user_prompt({"prompt": f"hello {n}"}, None, None)
        await hooks.aclose()

    asyncio.run(run())
    assert len(hooks.sessions) == 2


def test_fastmcp_clients_without_a_session_key_share_no_session(tmp_path: Path) -> None:
    pytest.importorskip("fastmcp")
    from types import SimpleNamespace

    from stretto_mcp.fastmcp_middleware import StrettoMiddleware

    middleware = StrettoMiddleware(None, store=tmp_path, session_key=lambda ctx: None)
    ctx = SimpleNamespace(fastmcp=SimpleNamespace(name="shop"))
    assert middleware._served(ctx) is not middleware._served(ctx)
