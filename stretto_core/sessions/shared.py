"""Session files by location: a local path, or a URL of a shared store (fsspec).

A fleet's sessions live in a shared store (a network file system, an object store), and a
learner reads them one at a time, never all at once. A location is a local path, or a URL
that fsspec opens (`file://`, `s3://`, `gs://`, `memory://`, …; the store's own fsspec package,
e.g. `s3fs`, must be installed). Local paths are read by `store.py` as always; URLs are listed
with `fs.find` and read line by line with the same parsing, so a torn line is skipped and
reported in both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, Sequence

from stretto_core.errors import InputError, StrettoError
from stretto_core.sessions.files import SESSION_SUFFIX
from stretto_core.sessions.model import Event, Session, SessionHeader
from stretto_core.sessions.store import (LoadReport, ReadReport, _parse_event_line, _parse_header,
                                         iter_session_files, read_header, read_session)


def is_url(location: str) -> bool:
    """A location fsspec opens (it names a protocol), not a local path."""
    return "://" in location


def _fs(url: str):
    try:
        from fsspec.core import url_to_fs
    except ImportError as exc:  # pragma: no cover - fsspec comes with the dask extra
        raise StrettoError("reading sessions by URL needs fsspec: pip install 'stretto[dask]'") from exc
    try:
        return url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise InputError(url, f"cannot open this store ({exc})") from exc


def session_locations(locations: Iterable[str | Path]) -> list[str]:
    """Every session file under the given files, folders and URLs, sorted within each folder."""
    out: list[str] = []
    for entry in locations:
        text = str(entry)
        if not is_url(text):
            out.extend(str(p) for p in iter_session_files([Path(text)]))
            continue
        fs, path = _fs(text)
        if fs.isdir(path):
            found = sorted(p for p in fs.find(path) if p.endswith(SESSION_SUFFIX))
            out.extend(fs.unstrip_protocol(p) for p in found)
        elif fs.isfile(path):
            out.append(text)
        else:
            raise InputError(text, "no such file or directory")
    return out


def header_at(location: str) -> SessionHeader:
    """The header of the session at `location`, reading only its first line."""
    if not is_url(location):
        return read_header(location)
    fs, path = _fs(location)
    try:
        with fs.open(path, "rt", encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, start=1):
                if line.strip():
                    return _parse_header(Path(location), lineno, line)
    except OSError as exc:
        raise InputError(location, f"cannot read: {exc}") from exc
    raise InputError(location, "empty file: no session header")


def session_at(location: str, report: ReadReport | None = None) -> Session:
    """The whole session at `location`; bad lines skipped and noted in `report`."""
    if not is_url(location):
        return read_session(location, report)
    report = report if report is not None else ReadReport(location)
    fs, path = _fs(location)
    header: SessionHeader | None = None
    events: list[Event] = []
    try:
        with fs.open(path, "rt", encoding="utf-8", errors="replace") as fh:
            chars = 0
            for lineno, line in enumerate(fh, start=1):
                chars += len(line)
                if not line.strip():
                    continue
                if header is None:
                    header = _parse_header(Path(location), lineno, line)
                    continue
                event = _parse_event_line(line, lineno, report)
                if event is not None:
                    events.append(event)
            size = getattr(getattr(fh, "buffer", None), "size", None)
            report.bytes_read = size if isinstance(size, int) else chars  # the store's size, else what was read
    except OSError as exc:
        raise InputError(location, f"cannot read: {exc}") from exc
    if header is None:
        raise InputError(location, "empty file: no session header")
    return Session.model_construct(header=header, events=events)  # both validated as they were read


def read_into(report: LoadReport, location: str) -> Session | None:
    """`session_at`, its problems noted in `report`; None (noted) when it is no session."""
    file_report = ReadReport(location)
    try:
        session = session_at(location, file_report)
    except InputError as exc:
        report.unreadable.append(exc)
        return None
    if file_report.skipped:
        report.files.append(file_report)
    report.sessions_read += 1
    report.bytes_read += file_report.bytes_read
    return session


def headers_at(locations: Sequence[str], report: LoadReport) -> Iterator[tuple[str, SessionHeader]]:
    """(location, header) of every location that is a session, one at a time; the others noted
    in `report`."""
    for location in locations:
        try:
            header = header_at(location)
        except InputError as exc:
            report.unreadable.append(exc)
            continue
        yield location, header
