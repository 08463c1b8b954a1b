"""Session files on disk: one JSONL file per session, header first, one event per line.

This module reads and writes whole session files. The live recorder (append-only, crash-safe,
several processes at once) and the store over a directory build on these two functions.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from pydantic import ValidationError

from stretto_core.errors import InputError
from stretto_core.session import SESSION_FORMAT_VERSION, Event, Session, SessionHeader, parse_event

SESSION_SUFFIX = ".jsonl"


def session_filename(session_id: str) -> str:
    """A file name for a session id: unsafe characters become `_`."""
    safe = "".join(ch if ch.isalnum() or ch in "-_.=+@" else "_" for ch in session_id)
    return safe[:200] + SESSION_SUFFIX


def encode_line(model: SessionHeader | Event) -> str:
    """One JSONL line for a header or event; fields left at None are omitted."""
    return model.model_dump_json(exclude_none=True) + "\n"


def write_session(session: Session, directory: str | Path) -> Path:
    """Write a whole session as `<dir>/<session id>.jsonl`, atomically (temp file, then rename)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    path = out / session_filename(session.header.session_id)
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(encode_line(session.header))
        for event in session.events:
            fh.write(encode_line(event))
    os.replace(tmp, path)
    return path


@dataclass
class ReadReport:
    """What reading a session file skipped: (line number, reason) per bad line."""

    path: str
    skipped: list[tuple[int, str]] = field(default_factory=list)


def read_session(path: str | Path, report: ReadReport | None = None) -> Session:
    """Read one session file. A torn or malformed event line is skipped and noted in `report`.

    A missing or unreadable header is fatal for the file and raises InputError naming it.
    """
    p = Path(path)
    report = report if report is not None else ReadReport(str(p))
    header: SessionHeader | None = None
    events: list[Event] = []
    try:
        fh = open(p, "r", encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(str(p), f"cannot read: {exc.strerror or exc}") from exc
    with fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            if header is None:
                header = _parse_header(p, lineno, line)
                continue
            event = _parse_event_line(line, lineno, report)
            if event is not None:
                events.append(event)
    if header is None:
        raise InputError(str(p), "empty file: no session header")
    return Session(header=header, events=events)


def _parse_header(path: Path, lineno: int, line: str) -> SessionHeader:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise InputError(str(path), f"the session header is not JSON ({exc.msg})", lineno) from exc
    if not isinstance(data, dict) or "stretto_session" not in data:
        raise InputError(str(path), "the first line is not a stretto session header", lineno)
    if data["stretto_session"] != SESSION_FORMAT_VERSION:
        raise InputError(str(path), f"stretto_session {data['stretto_session']!r} is not version "
                                    f"{SESSION_FORMAT_VERSION}", lineno)
    try:
        return SessionHeader.model_validate(data)
    except ValidationError as exc:
        raise InputError(str(path), f"invalid session header: {_first_error(exc)}", lineno) from exc


def _parse_event_line(line: str, lineno: int, report: ReadReport) -> Event | None:
    try:
        data = json.loads(line)
    except ValueError as exc:
        report.skipped.append((lineno, f"not JSON ({exc.msg}); a torn or partial line"))
        return None
    if not isinstance(data, dict):
        report.skipped.append((lineno, "not a JSON object"))
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
