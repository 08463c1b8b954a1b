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
