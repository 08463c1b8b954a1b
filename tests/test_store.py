"""The store over a directory: list and filter by header, iterate, load, report bad lines."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from stretto_core.errors import InputError
from stretto_core.sessions.model import Session, SessionHeader, UserMessage
from stretto_core.sessions.store import LoadReport, SessionStore, load_sessions, write_session

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def put(directory: Path, session_id: str, *, harness: str = "tau2", agent: str = "gpt-x", app: str = "retail",
        task: str = "t1", day: int | None = 0, events: int = 1) -> Path:
    header = SessionHeader(session_id=session_id, harness=harness, agent_model=agent, app=app, task_id=task,
                           started_at=None if day is None else T0 + timedelta(days=day))
    return write_session(Session(header=header, events=[UserMessage(text=str(i)) for i in range(events)]),
                         directory)


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    put(tmp_path, "a", harness="tau2", agent="gpt-x", app="retail", task="t1", day=0)
    put(tmp_path, "b", harness="tau2", agent="claude", app="airline", task="t2", day=1)
    put(tmp_path / "more", "c", harness="mcp-proxy", agent="gpt-x", app="retail", task="t1", day=2)
    put(tmp_path, "d", harness="agentdojo", agent="gpt-x", app="banking", task="t3", day=None)
    return SessionStore(tmp_path)


def ids(infos: list) -> list[str]:
    return [i.session_id for i in infos]


def test_the_store_lists_every_session_under_its_directory_oldest_first(store: SessionStore) -> None:
    assert ids(store.list()) == ["d", "a", "b", "c"]


def test_the_store_filters_by_harness_agent_app_and_task(store: SessionStore) -> None:
    assert ids(store.list(harness="tau2")) == ["a", "b"]
    assert ids(store.list(agent="gpt-x")) == ["d", "a", "c"]
    assert ids(store.list(app="retail")) == ["a", "c"]
    assert ids(store.list(task="t2")) == ["b"]
    assert ids(store.list(agent="gpt-x", app="retail", harness="mcp-proxy")) == ["c"]
    assert store.list(harness="nobody") == []


def test_the_store_filters_by_start_time_since_inclusive_until_exclusive(store: SessionStore) -> None:
    assert ids(store.list(since=T0 + timedelta(days=1))) == ["b", "c"]
    assert ids(store.list(until=T0 + timedelta(days=1))) == ["a"]
    assert ids(store.list(since="2026-03-01T12:00Z", until="2026-03-03")) == ["b"]
    assert ids(store.list(since=datetime(2026, 3, 2))) == ["b", "c"], "a naive time is UTC"


def test_a_bad_time_filter_is_an_error_that_names_the_value(store: SessionStore) -> None:
    with pytest.raises(InputError, match="yesterday"):
        store.list(since="yesterday")


def test_listing_reads_only_the_first_line_of_each_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = put(tmp_path, "a")
    with open(path, "a") as fh:
        fh.write("this line is not json\n")
    assert ids(SessionStore(tmp_path).list()) == ["a"]
    assert caplog.records == []


def test_iterating_yields_whole_sessions_that_match(store: SessionStore) -> None:
    sessions = list(store.iter_sessions(app="retail"))
    assert [s.session_id for s in sessions] == ["a", "c"]
    assert all(isinstance(s.events[0], UserMessage) for s in sessions)


def test_a_malformed_line_is_reported_with_file_and_line_and_skipped(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = put(tmp_path, "a", events=3)
    lines = path.read_text().splitlines()
    lines[2] = '{"kind": "no_such_event"}'
    path.write_text("\n".join(lines) + "\n")
    report = LoadReport()
    with caplog.at_level(logging.WARNING):
        [session] = SessionStore(tmp_path).iter_sessions(report=report)
    assert [e.text for e in session.events] == ["0", "2"]
    assert report.skipped_lines == 1
    assert report.problems()[0].startswith(f"{path}:3: invalid event")
    assert any(f"{path}:3:" in r.getMessage() for r in caplog.records)


def test_a_file_in_the_store_that_is_not_a_session_is_skipped_and_reported(tmp_path: Path) -> None:
    put(tmp_path, "a")
    (tmp_path / "notes.jsonl").write_text('{"something": "else"}\n')
    report = LoadReport()
    assert ids(SessionStore(tmp_path).list(report=report)) == ["a"]
    assert [e.path for e in report.unreadable] == [str(tmp_path / "notes.jsonl")]


def test_a_store_whose_directory_does_not_exist_yet_is_empty(tmp_path: Path) -> None:
    assert SessionStore(tmp_path / "later").list() == []


def test_the_default_store_lives_under_stretto_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRETTO_HOME", str(tmp_path))
    assert SessionStore().directory == tmp_path / "sessions"


def test_a_store_records_and_reads_back_its_own_sessions(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with store.recorder(SessionHeader(session_id="live", harness="h")) as rec:
        rec.user("hi")
    assert rec.path == store.path_for("live")
    assert [e.text for e in store.read("live.jsonl").events] == ["hi"]


def test_loading_accepts_files_and_directories_and_reports_skipped_lines(tmp_path: Path) -> None:
    a = put(tmp_path / "one", "a")
    put(tmp_path / "two", "b", events=2)
    bad = put(tmp_path / "two", "c")
    with open(bad, "a") as fh:
        fh.write('{"kind": "user", "te\n')
    report = LoadReport()
    sessions = load_sessions([a, tmp_path / "two"], report)
    assert [s.session_id for s in sessions] == ["a", "b", "c"]
    [problem] = report.problems()
    assert problem.startswith(f"{bad}:3: not JSON") and problem.endswith("a torn or partial line; line skipped")


def test_loading_a_named_file_that_is_not_a_session_is_an_error_naming_it(tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text('{"role": "user"}\n')
    with pytest.raises(InputError, match="other.jsonl:1: the first line is not a stretto session header"):
        load_sessions(other)
    with pytest.raises(InputError, match="no such file"):
        load_sessions([tmp_path / "missing.jsonl"])
