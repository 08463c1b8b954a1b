"""Real processes: a recorder killed mid-stream, and several recorders writing at once."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stretto_core.sessions.recorder import FLUSH_LINES, SessionRecorder
from stretto_core.sessions.model import SessionHeader, ToolResult
from stretto_core.sessions.store import ReadReport, read_session

WRITERS = 4
EVENTS_EACH = 120

CHILD = """
import sys
from stretto_core.sessions.recorder import SessionRecorder
from stretto_core.sessions.model import SessionHeader
rec = SessionRecorder(sys.argv[1], SessionHeader(session_id="killed", harness="test"), flush_lines=int(sys.argv[2]))
i = 0
while True:
    rec.tool_result(f"c{i}", "t", "x" * (i % 5000))
    print(i, flush=True)
    i += 1
"""


@pytest.mark.parametrize("flush_lines", [1, FLUSH_LINES])
def test_a_recorder_killed_mid_stream_loses_at_most_the_events_of_its_unfilled_batch(
        tmp_path: Path, flush_lines: int) -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), str(flush_lines)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    confirmed = -1
    for line in child.stdout:
        confirmed = int(line)
        if confirmed >= 300:
            break
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    path = tmp_path / "killed.jsonl"
    report = ReadReport(str(path))
    ids = [e.call_id for e in read_session(path, report).events]
    assert len(ids) >= (confirmed + 1) - (flush_lines - 1)  # with flush_lines=1: every completed event
    assert ids == [f"c{i}" for i in range(len(ids))]
    line_count = len(path.read_bytes().splitlines())
    assert [line for line, _ in report.skipped] in ([], [line_count])


def test_a_torn_last_line_is_reported_with_its_file_and_line_and_skipped(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with SessionRecorder(tmp_path, SessionHeader(session_id="torn", harness="test")) as rec:
        rec.tool_result("c0", "t", "whole")
    with open(rec.path, "ab") as fh:
        fh.write(b'{"kind": "tool_result", "call_id": "c1", "to')
    report = ReadReport(str(rec.path))
    session = read_session(rec.path, report)
    assert [e.call_id for e in session.events] == ["c0"]
    assert report.skipped[0][0] == 3
    assert f"{rec.path}:3:" in report.problems()[0]
    assert any(f"{rec.path}:3:" in r.getMessage() for r in caplog.records)


def _record(directory: str, session_id: str, writer: int, start: multiprocessing.synchronize.Event) -> None:
    start.wait(10)
    with SessionRecorder(directory, SessionHeader(session_id=session_id, harness="test")) as rec:
        for i in range(EVENTS_EACH):
            big = 70_000 if i % 10 == 0 else 50  # lines larger than a pipe buffer, too
            rec.tool_result(f"w{writer}-{i}", "t", str(writer) * big)


def _run_writers(directory: Path, shared: bool) -> None:
    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_record, args=(str(directory), "shared" if shared else f"own-{w}", w, start))
             for w in range(WRITERS)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0


def _ids_by_writer(events: list[ToolResult]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for e in events:
        writer = int(e.call_id[1:].split("-")[0])
        assert set(e.content) == {str(writer)}, "a line holds another writer's bytes"
        out.setdefault(writer, []).append(e.call_id)
    return out


def test_four_processes_recording_their_own_sessions_lose_nothing(tmp_path: Path) -> None:
    _run_writers(tmp_path, shared=False)
    for w in range(WRITERS):
        report = ReadReport("")
        events = read_session(tmp_path / f"own-{w}.jsonl", report).events
        assert report.skipped == []
        assert _ids_by_writer(events) == {w: [f"w{w}-{i}" for i in range(EVENTS_EACH)]}


def test_four_processes_appending_to_one_session_file_never_interleave_lines(tmp_path: Path) -> None:
    _run_writers(tmp_path, shared=True)
    path = tmp_path / "shared.jsonl"
    lines = path.read_bytes().splitlines()
    assert len(lines) == 1 + WRITERS * EVENTS_EACH
    assert sum(b'"stretto_session"' in line for line in lines) == 1
    assert all(isinstance(json.loads(line), dict) for line in lines)
    report = ReadReport(str(path))
    by_writer = _ids_by_writer(read_session(path, report).events)
    assert report.skipped == []
    assert by_writer == {w: [f"w{w}-{i}" for i in range(EVENTS_EACH)] for w in range(WRITERS)}
    assert os.path.getsize(path) > WRITERS * (EVENTS_EACH // 10) * 70_000


EXITING = """
import sys
from stretto_core.sessions.recorder import SessionRecorder
from stretto_core.sessions.model import SessionHeader
rec = SessionRecorder(sys.argv[1], SessionHeader(session_id="exiting", harness="test"), flush_ms=600_000)
rec.user("waiting when the interpreter exits")
assert rec.pending == 1
"""


def test_events_still_waiting_when_the_interpreter_exits_are_written_at_exit(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-c", EXITING, str(tmp_path)], check=True, timeout=60)
    events = read_session(tmp_path / "exiting.jsonl").events
    assert [e.text for e in events] == ["waiting when the interpreter exits"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_neither_loses_nor_doubles_the_events_waiting_in_its_parent(tmp_path: Path) -> None:
    rec = SessionRecorder(tmp_path, SessionHeader(session_id="forked", harness="test"), flush_ms=600_000)
    rec.user("one")
    rec.user("two")
    assert rec.pending == 2
    pid = os.fork()
    if pid == 0:  # the child: record and close, then leave without running the parent's atexit
        try:
            rec.user("from the child")
            rec.close()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    rec.user("three")
    rec.close()
    texts = [e.text for e in read_session(rec.path).events]
    assert texts == ["one", "two", "from the child", "three"]
