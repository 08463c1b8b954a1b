"""`stretto replay` replays only the flow's app unless `--any-app` (issue 26, item 15)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stretto_core import ToolManifest
from stretto_core.cli import main
from stretto_core.flow.ir import learn, save_flow
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage
from stretto_core.sessions.store import write_session


def _session(app: str, i: int) -> Session:
    manifest = ToolManifest.declare(app, reads=["get_order", "get_customer"], writes=["refund"])
    order = {"order_id": f"O{i}", "customer_id": f"C{i}"}
    calls = [("get_order", {"order_id": f"O{i}"}, order), ("get_customer", {"customer_id": f"C{i}"}, {"tier": "x"}),
             ("refund", {"order_id": f"O{i}"}, {"ok": True})]
    events: list[Any] = [UserMessage(text=f"refund O{i}")]
    for n, (tool, args, result) in enumerate(calls):
        events.append(LLMTurn(calls=[ToolCall(call_id=f"c{n}", tool=tool, arguments=args)]))
        events.append(ToolResult(call_id=f"c{n}", tool=tool, content=json.dumps(result), parsed=result))
    events.append(LLMTurn(text="done"))
    return Session(header=SessionHeader(session_id=f"{app}-{i}", harness="test", app=app, manifest=manifest),
                   events=events)


def test_replay_keeps_to_the_flows_app_unless_any_app(tmp_path: Path, capsys: Any) -> None:
    shop = [_session("shop", i) for i in range(10)]
    other = [_session("other", i) for i in range(6)]
    for s in shop + other:
        write_session(s, tmp_path / "sessions")
    save_flow(learn(shop), tmp_path / "shop.flow.json")
    args = ["replay", "--flow", str(tmp_path / "shop.flow.json"), "--sessions", str(tmp_path / "sessions"),
            "--theta", "0.1"]
    assert main([*args, "--json", str(tmp_path / "mine.json")]) == 0
    assert "skipped 6 of other apps" in capsys.readouterr().err
    mine = json.loads((tmp_path / "mine.json").read_text())
    assert mine["episodes"] == 10 and mine["lookups"] > 0
    assert main([*args, "--any-app", "--json", str(tmp_path / "all.json")]) == 0
    assert json.loads((tmp_path / "all.json").read_text())["episodes"] == 16
