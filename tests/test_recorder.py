"""The recorder writes what the store reads, and never lets a failed write reach the agent."""

from __future__ import annotations

import errno
import gc
import json
import logging
import os
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stretto_core.sessions import recorder as recorder_module
from stretto_core.sessions.manifest import InputContract, ToolKind, ToolManifest, ToolSpec
from stretto_core.sessions.recorder import SessionRecorder
from stretto_core.sessions.model import (LLMTurn, Lookup, SessionHeader, ToolCall, ToolResult, Usage,
                                  UserMessage)
from stretto_core.sessions.store import ReadReport, read_session, session_filename

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def full_header(session_id: str = "s-1") -> SessionHeader:
    manifest = ToolManifest(app="shop", tools={
        "get_order": ToolSpec(kind=ToolKind.read, description="an order by id",
                              contract=InputContract(args={"order_id": "string"}, required=["order_id"])),
        "refund": ToolSpec(kind=ToolKind.write),
    })
    return SessionHeader(session_id=session_id, harness="openai-agents", agent_model="gpt-x", app="shop",
                         manifest=manifest, manifest_hash="abc", task_id="t7", trial=2, reward=1.0,
                         solo=True, started_at=T0, source="live", labels={"split": "test"})


def every_event() -> list:
    call = ToolCall(call_id="c1", tool="get_order", arguments={"order_id": "#1"})
    return [
        UserMessage(text="where is my order?", calls=[ToolCall(call_id="u1", tool="phone")], at=T0),
        LLMTurn(text="let me look", calls=[call], usage=Usage(input_tokens=10, output_tokens=3, cost=0.01), at=T0),
        ToolResult(call_id="c1", tool="get_order", content='{"status": "sent"}', parsed={"status": "sent"},
                   error=False, at=T0),
        Lookup(call_id="stretto-1", tool="get_user", arguments={"user_id": "u"}, content="{}", parsed={},
               error=True, after_call_id="c1", site="get_order", score=0.9, reach=0.8, binding=0.7,
               policy="greedy", used=True, at=T0),
        LLMTurn(text="it was sent", at=T0),
    ]


def test_every_event_and_a_header_with_a_manifest_round_trip_through_the_recorder(tmp_path: Path) -> None:
    with SessionRecorder(tmp_path, full_header()) as rec:
        for event in every_event():
            rec.record(event)
    session = read_session(rec.path)
    assert session.header == full_header()
    assert session.events == every_event()


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                           max_leaves=8)


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(st.text(), min_size=1, max_size=4), arguments=st.dictionaries(st.text(), json_values))
def test_any_text_and_any_json_arguments_round_trip_one_event_per_line(
        tmp_path_factory: pytest.TempPathFactory, texts: list[str], arguments: dict) -> None:
    directory = tmp_path_factory.mktemp("prop")
    with SessionRecorder(directory, full_header()) as rec:
        for text in texts:
            rec.llm_turn(text, calls=[ToolCall(call_id="c", tool="t", arguments=arguments)])
    session = read_session(rec.path)
    assert [(e.text, e.calls[0].arguments) for e in session.events] == [(t, arguments) for t in texts]
    assert len(rec.path.read_bytes().splitlines()) == 1 + len(texts)


def test_the_convenience_calls_record_the_same_events_as_the_models(tmp_path: Path) -> None:
    with SessionRecorder(tmp_path, full_header()) as rec:
        rec.user("hi")
        rec.llm_turn("looking", calls=[ToolCall(call_id="c1", tool="get_order")])
        rec.tool_result("c1", "get_order", '{"a": 1}')
        rec.lookup("stretto-1", "get_user", {"id": 1}, "[1]", after_call_id="c1", score=0.5)
    kinds = [(type(e).__name__, getattr(e, "parsed", None)) for e in read_session(rec.path).events]
    assert kinds == [("UserMessage", None), ("LLMTurn", None), ("ToolResult", {"a": 1}), ("Lookup", [1])]


def test_events_without_a_time_are_stamped_when_recorded(tmp_path: Path) -> None:
    header = SessionHeader(session_id="s", harness="h")
    with SessionRecorder(tmp_path, header) as rec:
        rec.user("hi")
    session = read_session(rec.path)
    assert session.header.started_at is not None
    assert session.events[0].at is not None


def test_a_file_is_named_by_its_session_id_and_holds_the_header_on_its_first_line(tmp_path: Path) -> None:
    with SessionRecorder(tmp_path, full_header("a/b c")) as rec:
        rec.user("hi")
    assert rec.path == tmp_path / session_filename("a/b c")
    first = json.loads(rec.path.read_text().splitlines()[0])
    assert first["stretto_session"] == 3 and first["session_id"] == "a/b c"


def test_with_flush_lines_one_each_event_is_on_disk_as_soon_as_it_is_recorded(tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, full_header(), flush_lines=1)
    rec.user("one")
    assert len(read_session(rec.path).events) == 1
    rec.user("two")
    assert len(read_session(rec.path).events) == 2
    rec.close()


def test_the_event_that_fills_a_batch_writes_it_before_record_returns(tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, full_header(), flush_lines=3, flush_ms=60_000)
    rec.user("one")
    rec.user("two")
    assert not rec.path.exists() and rec.pending == 2  # nor is the header: it goes with the first batch
    rec.user("three")
    assert [e.text for e in read_session(rec.path).events] == ["one", "two", "three"]
    rec.user("four")
    assert rec.flush() and len(read_session(rec.path).events) == 4
    rec.close()


def test_waiting_events_are_written_by_the_background_thread_after_flush_ms(tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, full_header(), flush_lines=1000, flush_ms=20)
    rec.user("one")
    rec.user("two")
    waited = 0.0
    while rec.pending and waited < 10:
        time.sleep(0.01)
        waited += 0.01
    assert rec.pending == 0
    assert [e.text for e in read_session(rec.path).events] == ["one", "two"]
    rec.close()


def test_a_recorder_dropped_without_close_still_writes_what_waits(tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, full_header(), flush_lines=1000, flush_ms=20)
    rec.user("left behind")
    path, rec = rec.path, None
    gc.collect()
    waited = 0.0
    while not _events_on_disk(path) and waited < 10:
        time.sleep(0.01)
        waited += 0.01
    assert [e.text for e in read_session(path).events] == ["left behind"]


def _events_on_disk(path: Path) -> list:
    """The events a file holds so far: none while it is not made, or made and not yet written
    (the background thread creates the file a moment before it writes the header)."""
    if not path.exists() or path.stat().st_size == 0:
        return []
    return read_session(path).events


def test_a_bad_batch_bound_is_refused_with_both_values(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not 0 and 100"):
        SessionRecorder(tmp_path, full_header(), flush_lines=0, flush_ms=100)


def test_a_second_recorder_of_the_same_session_appends_without_a_second_header(tmp_path: Path) -> None:
    with SessionRecorder(tmp_path, full_header()) as rec:
        rec.user("first run")
    with SessionRecorder(tmp_path, full_header(), fsync=True) as rec:
        rec.user("resumed")
    lines = rec.path.read_text().splitlines()
    assert sum('"stretto_session"' in line for line in lines) == 1
    assert [e.text for e in read_session(rec.path).events] == ["first run", "resumed"]


def test_a_recorder_resuming_after_a_torn_line_starts_on_a_fresh_line(tmp_path: Path) -> None:
    with SessionRecorder(tmp_path, full_header()) as rec:
        rec.user("before the crash")
    with open(rec.path, "a") as fh:
        fh.write('{"kind": "user", "te')  # what a crash mid-write would leave
    with SessionRecorder(tmp_path, full_header()) as rec:
        rec.user("after the crash")
    report = ReadReport(str(rec.path))
    session = read_session(rec.path, report)
    assert [e.text for e in session.events] == ["before the crash", "after the crash"]
    assert [line for line, _ in report.skipped] == [3]


def test_an_argument_json_cannot_hold_is_recorded_as_its_text(tmp_path: Path) -> None:
    class Opaque:
        def __str__(self) -> str:
            return "<opaque>"

    with SessionRecorder(tmp_path, full_header()) as rec:
        rec.llm_turn(calls=[ToolCall(call_id="c", tool="t", arguments={"x": Opaque()})])
    assert read_session(rec.path).agent_calls()[0].arguments == {"x": "<opaque>"}


class FlakyDisk:
    """os.write, until `full` is set: then it writes `partial` bytes at most and fails with ENOSPC."""

    def __init__(self, partial: int = 0) -> None:
        self.full = False
        self.partial = partial
        self.failures = 0
        self.failed_in: list[tuple[str, float]] = []

    def write(self, fd: int, data: bytes) -> int:
        if not self.full:
            return os.write(fd, data)
        self.failures += 1
        self.failed_in.append((threading.current_thread().name, time.monotonic()))
        if self.partial:
            os.write(fd, data[: self.partial])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> FlakyDisk:
    flaky = FlakyDisk()
    monkeypatch.setattr(recorder_module, "_write", flaky.write)
    return flaky


def test_a_full_disk_keeps_events_in_order_and_writes_them_once_space_returns(
        tmp_path: Path, disk: FlakyDisk, caplog: pytest.LogCaptureFixture) -> None:
    rec = SessionRecorder(tmp_path, full_header(), flush_lines=1)
    rec.user("before")
    disk.full = True
    with caplog.at_level(logging.WARNING, logger="stretto.recorder"):
        for i in range(5):
            rec.tool_result(f"c{i}", "get_order", f"result {i}")
        assert rec.pending == 5 and disk.failures == 1  # the agent's thread does not retry: it backs off
        disk.full = False
        rec.user("after")
        assert rec.flush()
    assert rec.pending == 0
    texts = [getattr(e, "content", None) or e.text for e in read_session(rec.path).events]
    assert texts == ["before"] + [f"result {i}" for i in range(5)] + ["after"]
    failures = [r.getMessage() for r in caplog.records if "cannot write" in r.getMessage()]
    assert len(failures) == 1
    assert str(rec.path) in failures[0] and os.strerror(errno.ENOSPC) in failures[0]
    rec.close()


def test_a_write_cut_short_by_a_full_disk_leaves_no_torn_line(tmp_path: Path, disk: FlakyDisk) -> None:
    rec = SessionRecorder(tmp_path, full_header())
    disk.full, disk.partial = True, 7
    rec.user("half written")
    disk.full = False
    rec.user("next")
    rec.close()
    report = ReadReport(str(rec.path))
    assert [e.text for e in read_session(rec.path, report).events] == ["half written", "next"]
    assert report.skipped == []


def test_events_still_unwritten_at_close_go_to_a_fallback_file_that_reads_as_the_session(
        tmp_path: Path, disk: FlakyDisk, caplog: pytest.LogCaptureFixture) -> None:
    rec = SessionRecorder(tmp_path / "sessions", full_header(), fallback_dir=tmp_path / "fallback", flush_lines=1)
    rec.user("written")
    disk.full = True
    rec.user("stuck 1")
    rec.user("stuck 2")
    with caplog.at_level(logging.WARNING, logger="stretto.recorder"):
        fallback = rec.close()
    assert fallback is not None and fallback.parent == tmp_path / "fallback"
    assert [e.text for e in read_session(rec.path).events] == ["written"]
    saved = read_session(fallback)
    assert saved.header == full_header()
    assert [e.text for e in saved.events] == ["stuck 1", "stuck 2"]
    assert any(str(fallback) in r.getMessage() for r in caplog.records)


def test_a_batch_that_meets_a_full_disk_waits_whole_and_is_written_whole_once_space_returns(
        tmp_path: Path, disk: FlakyDisk) -> None:
    disk.partial = 11
    rec = SessionRecorder(tmp_path, full_header(), flush_lines=2, flush_ms=60_000)
    disk.full = True
    for i in range(4):
        rec.tool_result(f"c{i}", "get_order", f"result {i}")
    assert rec.pending == 4 and disk.failures == 1  # the batch's filling event tries once; then it backs off
    disk.full = False
    assert rec.flush() and rec.pending == 0
    rec.close()
    report = ReadReport(str(rec.path))
    assert [e.content for e in read_session(rec.path, report).events] == [f"result {i}" for i in range(4)]
    assert report.skipped == []


def test_a_directory_that_cannot_be_created_never_raises_and_nothing_is_lost(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the session folder should be")
    rec = SessionRecorder(blocker / "sessions", full_header(), fallback_dir=tmp_path / "fallback")
    rec.user("hello")
    fallback = rec.close()
    assert fallback is not None
    assert [e.text for e in read_session(fallback).events] == ["hello"]


def test_recording_again_after_a_fallback_close_still_starts_the_file_with_its_header(tmp_path: Path) -> None:
    blocker = tmp_path / "sessions"
    blocker.write_text("in the way")
    rec = SessionRecorder(blocker, full_header(), fallback_dir=tmp_path / "fallback")
    rec.user("saved in the fallback")
    assert rec.close() is not None
    blocker.unlink()
    rec.user("written later")
    rec.close()
    assert [e.text for e in read_session(rec.path).events] == ["written later"]


def test_a_full_disk_is_retried_in_the_background_backing_off_never_in_the_agents_record_call(
        tmp_path: Path, disk: FlakyDisk, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder_module, "RETRY_FIRST_SECONDS", 0.05)
    rec = SessionRecorder(tmp_path, full_header(), flush_lines=1)
    rec.user("before")
    disk.full = True
    for i in range(2000):
        rec.tool_result(f"c{i}", "get_order", f"result {i}")
    agent = threading.current_thread().name
    assert [who for who, _ in disk.failed_in].count(agent) == 1  # the first failure; then only appends
    while disk.failures < 5:
        time.sleep(0.05)
    retries = [at for who, at in disk.failed_in if who != agent]
    waits = [b - a for a, b in zip(retries, retries[1:])]
    assert all(wait >= 0.05 * 2 ** (i + 1) * 0.95 for i, wait in enumerate(waits)), waits  # each twice the last
    disk.full = False
    deadline = time.monotonic() + 10
    while rec.pending and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rec.pending == 0  # written by the background thread once the disk took it, with no record()
    assert len(read_session(rec.path).events) == 2001
    rec.close()


def test_a_full_disk_keeps_events_up_to_the_backlog_bound_then_drops_new_ones_and_says_so_once(
        tmp_path: Path, disk: FlakyDisk, caplog: pytest.LogCaptureFixture) -> None:
    rec = SessionRecorder(tmp_path, full_header(), flush_lines=1, backlog_bytes=4000)
    rec.user("before")
    disk.full = True
    with caplog.at_level(logging.WARNING, logger="stretto.recorder"):
        for i in range(100):
            rec.tool_result(f"c{i}", "get_order", f"result {i:03d}")
        kept = rec.pending
        assert 0 < kept < 100 and rec.dropped == 100 - kept
        dropped_said = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
        assert len(dropped_said) == 1
        disk.full = False
        assert rec.flush()
    counted = [r.getMessage() for r in caplog.records if f"{100 - kept} events" in r.getMessage()]
    assert len(counted) == 1 and "dropped" in counted[0]
    contents = [e.content for e in read_session(rec.path).events[1:]]
    assert contents == [f"result {i:03d}" for i in range(kept)]  # nothing lost up to the bound, in order
    rec.close()


def test_a_close_that_saved_a_fallback_leaves_no_header_only_file_behind(tmp_path: Path, disk: FlakyDisk,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder_module, "RETRY_FIRST_SECONDS", 0.02)
    disk.full = True
    rec = SessionRecorder(tmp_path / "s", full_header(), fallback_dir=tmp_path / "fallback", flush_lines=1)
    rec.user("stuck")
    assert rec.close() is not None
    disk.full = False
    time.sleep(0.2)
    assert not rec.path.exists() or rec.path.stat().st_size == 0  # (opening it made it, empty)


def test_a_lone_surrogate_in_a_result_and_a_lookup_is_recorded_and_reads_back_unchanged(tmp_path: Path) -> None:
    cut = "half an emoji: \ud83d"
    with SessionRecorder(tmp_path, full_header()) as rec:
        rec.tool_result("c1", "get_order", json.dumps({"note": cut}), parsed={"note": cut})
        rec.lookup("stretto-1", "get_user", {"name": cut}, cut)
        rec.user("ok ✓")
    raw = rec.path.read_bytes()
    raw.decode("utf-8")  # valid UTF-8 on disk
    events = read_session(rec.path).events
    assert [type(e).__name__ for e in events] == ["ToolResult", "Lookup", "UserMessage"]
    assert events[0].parsed == {"note": cut} and json.loads(events[0].content) == {"note": cut}
    assert events[1].arguments == {"name": cut} and events[1].content == cut
    assert events[2].text == "ok ✓" and "✓".encode() in raw  # lines without a surrogate stay as they were
