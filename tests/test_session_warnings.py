"""A session file that is out of order is read, but what is wrong is said, with file and line."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from stretto_core.evaluate.loading import sessions_with_manifests
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.store import LoadReport, ReadReport, load_sessions, read_session

HEADER = {"stretto_session": 1, "session_id": "s1", "harness": "test"}


def write(path: Path, *events: dict, header: dict = HEADER) -> Path:
    path.write_text("\n".join(json.dumps(e) for e in (header, *events)) + "\n")
    return path


def call(call_id: str, at: str | None = None) -> dict:
    turn = {"kind": "llm_turn", "calls": [{"call_id": call_id, "tool": "get", "arguments": {}}]}
    return turn | ({"at": at} if at else {})


def result(call_id: str, at: str | None = None) -> dict:
    out = {"kind": "tool_result", "call_id": call_id, "tool": "get", "content": "{}"}
    return out | ({"at": at} if at else {})


def warnings_of(path: Path, caplog: pytest.LogCaptureFixture) -> list[str]:
    report = ReadReport(str(path))
    with caplog.at_level(logging.WARNING, logger="stretto.store"):
        read_session(path, report)
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == len(report.warnings)
    return logged


def test_a_result_naming_a_call_no_one_made_is_said_with_file_and_line(tmp_path: Path, caplog) -> None:
    path = write(tmp_path / "s.jsonl", call("c1"), result("c1"), result("ghost"))
    assert warnings_of(path, caplog) == [f"{path}:4: a result names call id 'ghost', which no call in the "
                                         f"session made"]


def test_a_result_before_its_call_is_said_to_be_out_of_order(tmp_path: Path, caplog) -> None:
    path = write(tmp_path / "s.jsonl", result("c1"), call("c1"))
    [said] = warnings_of(path, caplog)
    assert said.startswith(f"{path}:2: the result of call 'c1' comes before the call (line 3)")


def test_an_event_whose_time_runs_back_is_said_to_be_out_of_order(tmp_path: Path, caplog) -> None:
    path = write(tmp_path / "s.jsonl", call("c1", "2026-03-01T12:00:05Z"), result("c1", "2026-03-01T12:00:01Z"))
    [said] = warnings_of(path, caplog)
    assert said.startswith(f"{path}:3: its time") and "before line 2's" in said


def test_a_well_ordered_session_says_nothing(tmp_path: Path, caplog) -> None:
    path = write(tmp_path / "s.jsonl", call("c1", "2026-03-01T12:00:00Z"), result("c1", "2026-03-01T12:00:01Z"))
    assert warnings_of(path, caplog) == []


def test_a_session_id_read_from_two_files_is_said(tmp_path: Path, caplog) -> None:
    write(tmp_path / "a.jsonl", call("c1"), result("c1"))
    write(tmp_path / "b.jsonl", call("c1"), result("c1"))
    report = LoadReport()
    with caplog.at_level(logging.WARNING):
        assert len(load_sessions([tmp_path], report)) == 2
    assert report.duplicates == [f"{tmp_path / 'b.jsonl'}: session id 's1' was already read from "
                                 f"{tmp_path / 'a.jsonl'}; both are kept"]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        list(sessions_with_manifests([tmp_path], manifests=[ToolManifest()], warn=None))
    assert any("'s1' was already read" in r.getMessage() for r in caplog.records)
