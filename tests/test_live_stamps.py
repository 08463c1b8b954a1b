"""A served session's events reach the recorder already stamped with their time, so the recorder
copies none of them to stamp it (copies were a fifth of the CPU of taking in and recording a
proxied call, issue 30 goal 5), and the times recorded still run in the order the events happened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stretto_core import Stretto, ToolCall, ToolManifest, read_session
from stretto_core.sessions.recorder import SessionRecorder


def test_every_event_of_a_served_call_reaches_the_recorder_stamped(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[Any] = []
    record = SessionRecorder.record
    monkeypatch.setattr(SessionRecorder, "record", lambda self, event: given.append(event) or record(self, event))
    stretto = Stretto(None, store=tmp_path, reads=["get_order"])
    live = stretto.session("s", tools=ToolManifest.declare(reads=["get_order"]))
    live.user("where is my order O1?")
    live.llm_turn(calls=[ToolCall(call_id="c1", tool="get_order", arguments={"order_id": "O1"})])
    live.after_tool_sync("c1", "get_order", {"order_id": "O1"}, '{"status": "shipped"}', lambda tool, args: "")
    live.after_tool_sync("c2", "get_order", {"order_id": "O2"}, '{"status": "lost"}', lambda tool, args: "")
    live.close()
    assert [e.kind for e in given] == ["user", "llm_turn", "tool_result", "llm_turn", "tool_result"]
    assert all(e.at is not None for e in given)
    [path] = tmp_path.glob("*.jsonl")
    times = [e.at for e in read_session(path).events]
    assert len(times) == 5 and times == sorted(times)


def test_a_session_that_records_nothing_stamps_nothing(tmp_path: Path) -> None:
    stretto = Stretto(None, store=False, reads=["get_order"])
    live = stretto.session("s", tools=ToolManifest.declare(reads=["get_order"]))
    assert live._stamp() is None


def _served_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str]]:
    """One served call that makes one lookup (after get_order, get_customer), its copies counted."""
    import json

    from pydantic import BaseModel

    from stretto_core import learn_flow
    from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolResult

    def session(i: int) -> Session:
        events = [LLMTurn(calls=[ToolCall(call_id="a", tool="get_order", arguments={"order_id": f"O{i}"})]),
                  ToolResult(call_id="a", tool="get_order", content=json.dumps({"order_id": f"O{i}", "customer_id": f"C{i}"})),
                  LLMTurn(calls=[ToolCall(call_id="b", tool="get_customer", arguments={"customer_id": f"C{i}"})]),
                  ToolResult(call_id="b", tool="get_customer", content="{}")]
        return Session(header=SessionHeader(session_id=f"s{i}", harness="t"), events=events)

    reads = ["get_order", "get_customer"]
    stretto = Stretto(learn_flow([session(i) for i in range(10)], ToolManifest.declare(reads=reads)),
                      reads=reads, store=tmp_path)
    live = stretto.session("live")
    copied: list[str] = []
    real_copy = BaseModel.model_copy
    monkeypatch.setattr(BaseModel, "model_copy",
                        lambda self, *a, **k: copied.append(type(self).__name__) or real_copy(self, *a, **k))
    live.after_tool_sync("c1", "get_order", {"order_id": "O42"}, json.dumps({"order_id": "O42", "customer_id": "C42"}),
                         lambda name, args: json.dumps({"customer_id": args.get("customer_id"), "tier": "gold"}))
    live.close()
    return live, copied


def test_a_served_calls_result_and_lookup_are_recorded_whole_without_being_copied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    live, copied = _served_call(tmp_path, monkeypatch)
    assert copied == []
    [path] = tmp_path.glob("*.jsonl")
    events = read_session(path).events
    assert [e.kind for e in events] == ["llm_turn", "tool_result", "lookup"]
    result, lookup = events[1], events[2]
    assert result.appended is not None and "get_customer" in result.appended and result.at is not None
    assert lookup.parsed == {"customer_id": "C42", "tier": "gold"} and lookup.at is not None
    assert result.at <= lookup.at


def test_a_served_session_keeps_its_lookups_without_their_parsed_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    live, _ = _served_call(tmp_path, monkeypatch)
    [kept] = live.lookups
    assert kept.tool == "get_customer" and kept.parsed is None and '"tier": "gold"' in kept.content
