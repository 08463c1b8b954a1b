"""Session files on disk: one JSONL file per session, header first, one event per line.

This module reads and writes whole session files, and is the store over a directory of them:
list and filter by header (reading only each file's first line), iterate, load. A torn or malformed
event line never stops a read: it is skipped, logged as a warning naming file and line, and kept
in a report. The live recorder (append-only, crash-safe, several processes) is `recorder.py`.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

from pydantic import ValidationError
from pydantic_core import to_json

from stretto_core.errors import InputError, snippet
from stretto_core.paths import stretto_home
from stretto_core.sessions.order import EventOrder, SeenIds
from stretto_core.sessions.limits import MAX_LINE_DEPTH, deeper_than, may_nest
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.files import SESSION_SUFFIX, encode_line, session_filename
from stretto_core.sessions.jsonline import loads
from stretto_core.sessions.model import (READABLE_SESSION_VERSIONS, SESSION_FORMAT_VERSION, Event, Session,
                                        SessionHeader, parse_event)
from stretto_core.sessions.recorder import SessionRecorder
from stretto_core.private import mode_for, open_private, private_dir


log = logging.getLogger("stretto.store")

def write_session(session: Session, directory: str | Path) -> Path:
    """Write a whole session as `<dir>/<session id>.jsonl`, atomically (temp file, then rename)."""
    out = Path(directory)
    private_dir(out)
    path = out / session_filename(session.header.session_id)
    _refuse_another_sessions_file(path, session.header.session_id)
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    try:
        fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode_for(path))
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(encode_line(session.header.model_copy(update={"stretto_session": SESSION_FORMAT_VERSION})))
            for event in session.events:
                fh.write(encode_line(event))
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, (ValueError, TypeError, RecursionError)):  # a value JSON cannot hold
            raise InputError(str(path), f"session {session.header.session_id!r} cannot be written: "
                                        f"{type(exc).__name__}: {exc}") from exc
        raise
    return path


def _refuse_another_sessions_file(path: Path, session_id: str) -> None:
    """A session is never written over a file that holds another one (left by an older stretto)."""
    if not path.is_file():
        return
    try:
        other = read_header(path).session_id
    except InputError:
        return  # not a session: a torn file of this very session, most likely; it is replaced
    if other != session_id:
        raise InputError(str(path), f"holds the session {other!r}; not overwritten with {session_id!r}")


@dataclass
class ReadReport:
    """What reading a session file skipped: (line number, reason) per bad line."""

    path: str
    skipped: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[tuple[int, str]] = field(default_factory=list)
    """(line, what is out of order): read, but said (`order.py`)."""
    bytes_read: int = 0
    """The file's size as read (a cluster's workers report what they read, `flow/distributed.py`)."""

    def problems(self) -> list[str]:
        """One `file:line: reason` string per skipped line."""
        return [f"{self.path}:{line}: {reason}; line skipped" for line, reason in self.skipped]


def read_session(path: str | Path, report: ReadReport | None = None) -> Session:
    """Read one session file. A torn or malformed event line is skipped, noted in `report` and
    logged as a warning with file and line.

    A missing or unreadable header is fatal for the file and raises InputError naming it.
    """
    p = Path(path)
    report = report if report is not None else ReadReport(str(p))
    header: SessionHeader | None = None
    events: list[Event] = []
    order = EventOrder(str(p))
    try:
        fh = open(p, "r", encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(str(p), f"cannot read: {exc.strerror or exc}") from exc
    with fh:
        report.bytes_read = os.fstat(fh.fileno()).st_size
        for lineno, line in enumerate(fh, start=1):
            if not line or line.isspace():  # `not line.strip()`, without copying the line
                continue
            if header is None:
                header = _parse_header(p, lineno, line)
                continue
            event = _parse_event_line(line, lineno, report)
            if event is not None:
                events.append(event)
                order.see(lineno, event)
            else:
                line_no, reason = report.skipped[-1]
                log.warning("%s:%d: %s; line skipped", p, line_no, reason)
    if header is None:
        raise InputError(str(p), "empty file: no session header")
    report.warnings.extend(order.finish())
    return Session.model_construct(header=header, events=events)  # both validated as they were read


def _parse_header(path: Path, lineno: int, line: str) -> SessionHeader:
    global _last_manifest
    try:
        data = loads(line)
    except ValueError as exc:
        if "\ufffd" in line or "\x00" in line:
            raise InputError(str(path), "not UTF-8 text (a binary file, or another encoding such as "
                                        "UTF-16): no session header", lineno) from exc
        raise InputError(str(path), f"the session header is not JSON ({exc.msg})", lineno) from exc
    except RecursionError as exc:
        raise InputError(str(path), "the session header is nested too deeply", lineno) from exc
    if not isinstance(data, dict) or "stretto_session" not in data:
        raise InputError(str(path), "the first line is not a stretto session header", lineno)
    version = data["stretto_session"]
    if type(version) is not int or version not in READABLE_SESSION_VERSIONS:
        versions = [str(v) for v in READABLE_SESSION_VERSIONS]
        known = ", ".join(versions[:-1]) + " or " + versions[-1] if len(versions) > 1 else versions[0]
        raise InputError(str(path), f"stretto_session {snippet(repr(version))} is not version {known}", lineno)
    if may_nest(line, MAX_LINE_DEPTH) and deeper_than(data, MAX_LINE_DEPTH):
        raise InputError(str(path), f"the session header nests deeper than {MAX_LINE_DEPTH} levels", lineno)
    raw = data.get("manifest")
    raw_json = to_json(raw) if type(raw) is dict else None  # as written: the order of its keys too
    last = _last_manifest
    if last is not None and raw_json is not None and last[0] == raw_json:
        data = {**data, "manifest": last[1]}  # the manifest just read: its model, not validated again
    try:
        header = SessionHeader.model_validate(data)
    except ValidationError as exc:
        raise InputError(str(path), f"invalid session header: {_first_error(exc)}", lineno) from exc
    if raw_json is not None and header.manifest is not None:
        _last_manifest = (raw_json, header.manifest)
    return header


_last_manifest: tuple[bytes, ToolManifest] | None = None
"""The manifest of the header read last, as written (JSON) and as validated: the sessions of one
app carry the same manifest, validated once for a run of them, not once per file (models are
never changed). Compared as written, not as equal dicts: two manifests equal but for the order
of their keys are kept apart, or a session's fingerprint (its JSON as read) would depend on the
file read before it, and a learn in shards on a cluster, whose order is the scheduler's, would
name other sessions than a learn in one process (issue 30, goal 6)."""


def _parse_event_line(line: str, lineno: int, report: ReadReport) -> Event | None:
    try:
        data = loads(line)
    except ValueError as exc:
        report.skipped.append((lineno, f"not JSON ({exc.msg}); a torn or partial line"))
        return None
    except RecursionError:
        report.skipped.append((lineno, "nested too deeply to read"))
        return None
    if not isinstance(data, dict):
        report.skipped.append((lineno, "not a JSON object"))
        return None
    if may_nest(line, MAX_LINE_DEPTH) and deeper_than(data, MAX_LINE_DEPTH):
        report.skipped.append((lineno, f"nests deeper than {MAX_LINE_DEPTH} levels"))
        return None
    try:
        return parse_event(data)
    except ValidationError as exc:
        report.skipped.append((lineno, f"invalid event: {_first_error(exc)}"))
        return None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ()))
    return f"{loc}: {err.get('msg')}" if loc else str(err.get("msg"))


def iter_session_files(paths: list[str | Path]) -> Iterator[Path]:
    """Every session file under the given files and directories, sorted within each directory."""
    for entry in paths:
        p = Path(entry)
        if p.is_dir():
            yield from sorted(q for q in p.rglob(f"*{SESSION_SUFFIX}") if q.is_file())
        elif p.is_file():
            yield p
        else:
            raise InputError(str(p), "no such file or directory")


def read_header(path: str | Path) -> SessionHeader:
    """The header of a session file, reading only its first line; InputError when there is none."""
    p = Path(path)
    try:
        with open(p, "r", encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, start=1):
                if line.strip():
                    return _parse_header(p, lineno, line)
    except OSError as exc:
        raise InputError(str(p), f"cannot read: {exc.strerror or exc}") from exc
    raise InputError(str(p), "empty file: no session header")


@dataclass
class LoadReport:
    """What loading many files skipped: bad lines per file, and files that are not sessions."""

    files: list[ReadReport] = field(default_factory=list)
    unreadable: list[InputError] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    """One warning per file holding a session id an earlier file held (both are kept)."""
    sessions_read: int = 0
    """Sessions read through `shared.read_into` (what a worker of a cluster learn counted)."""
    bytes_read: int = 0
    """The bytes of the files those sessions came from."""
    _ids: SeenIds = field(default_factory=SeenIds, repr=False)

    @property
    def skipped_lines(self) -> int:
        return sum(len(r.skipped) for r in self.files)

    def problems(self) -> list[str]:
        """Every problem as one `file[:line]: reason` string, files first."""
        return [str(e) for e in self.unreadable] + [m for r in self.files for m in r.problems()]

    def _unreadable(self, error: InputError) -> None:
        self.unreadable.append(error)
        log.warning("%s; file skipped", error)

    def _read(self, path: Path) -> Session:
        file_report = ReadReport(str(path))
        session = read_session(path, file_report)
        if file_report.skipped or file_report.warnings:
            self.files.append(file_report)
        duplicate = self._ids.check(session.session_id, str(path))
        if duplicate is not None:
            self.duplicates.append(duplicate)
        return session


@dataclass(frozen=True)
class SessionInfo:
    """A session file found in a store: its path and its header (the rest is not read)."""

    path: Path
    header: SessionHeader

    @property
    def session_id(self) -> str:
        return self.header.session_id


TimeBound = datetime | str | None


class SessionStore:
    """The session files under one directory (default `$STRETTO_HOME/sessions`), subfolders included."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else stretto_home() / "sessions"

    def path_for(self, session_id: str) -> Path:
        return self.directory / session_filename(session_id)

    def list(self, harness: str | None = None, agent: str | None = None, app: str | None = None,
             task: str | None = None, since: TimeBound = None, until: TimeBound = None,
             report: LoadReport | None = None) -> list[SessionInfo]:
        """The sessions whose header matches every filter given, oldest first.

        `agent` matches `agent_model`, `task` matches `task_id`; `since` (inclusive) and `until`
        (exclusive) bound `started_at`, and a session without one never matches a time bound.
        Naive times are taken as UTC. Only each file's first line is read.
        """
        report = report if report is not None else LoadReport()
        lo, hi = _utc(since), _utc(until)
        wanted = {"harness": harness, "agent_model": agent, "app": app, "task_id": task}
        found: list[SessionInfo] = []
        for path in self._files():
            try:
                header = read_header(path)
            except InputError as exc:
                report._unreadable(exc)
                continue
            if any(v is not None and getattr(header, k) != v for k, v in wanted.items()):
                continue
            started = _utc(header.started_at)
            if (lo or hi) and (started is None or (lo and started < lo) or (hi and started >= hi)):
                continue
            found.append(SessionInfo(path, header))
        epoch = datetime.min.replace(tzinfo=timezone.utc)
        return sorted(found, key=lambda i: (_utc(i.header.started_at) or epoch, str(i.path)))

    def iter_sessions(self, harness: str | None = None, agent: str | None = None,
                      app: str | None = None, task: str | None = None, since: TimeBound = None,
                      until: TimeBound = None, report: LoadReport | None = None) -> Iterator[Session]:
        """The matching sessions, read whole one at a time (see `list` for the filters)."""
        report = report if report is not None else LoadReport()
        for info in self.list(harness, agent, app, task, since, until, report):
            try:
                yield report._read(info.path)
            except InputError as exc:  # changed since it was listed
                report._unreadable(exc)

    def read(self, path: str | Path, report: ReadReport | None = None) -> Session:
        """One session file; a relative path is taken inside the store's directory."""
        p = Path(path)
        return read_session(p if p.is_absolute() or p.exists() else self.directory / p, report)

    def write(self, session: Session) -> Path:
        return write_session(session, self.directory)

    def recorder(self, header: SessionHeader, **options: Any) -> SessionRecorder:
        """A live recorder of a new session in this store (options as `SessionRecorder`)."""
        return SessionRecorder(self.directory, header, **options)

    def _files(self) -> Iterator[Path]:
        if self.directory.is_dir():
            yield from iter_session_files([self.directory])


def load_sessions(paths: str | Path | Iterable[str | Path],
                  report: LoadReport | None = None) -> list[Session]:
    """Every session in the given files and directories, in order; bad lines skipped and reported.

    A file named explicitly must be a session (else InputError naming it); a file found inside a
    directory that is not one is skipped, logged and noted in `report.unreadable`.
    """
    report = report if report is not None else LoadReport()
    entries = [paths] if isinstance(paths, (str, Path)) else list(paths)
    sessions: list[Session] = []
    for entry in entries:
        if not Path(entry).is_dir():
            sessions.extend(report._read(p) for p in iter_session_files([entry]))
            continue
        for path in iter_session_files([entry]):
            try:
                sessions.append(report._read(path))
            except InputError as exc:
                report._unreadable(exc)
    return sessions


def _utc(value: TimeBound) -> datetime | None:
    """A time as an aware UTC datetime; ISO strings accepted (a trailing `Z` too), naive is UTC."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
        except ValueError as exc:
            raise InputError("time filter", f"{value!r} is not an ISO date or time") from exc
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
