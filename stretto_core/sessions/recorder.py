"""Record a live session to disk as it happens, without ever getting in the agent's way.

One JSONL file per session (`store.session_filename`): the header on the first line, then one
event per line. Events wait in memory briefly and are written in batches: each batch is one
unbuffered `os.write` to a file opened `O_APPEND` (kept open), under an exclusive `flock`, so several
agent processes can append to one session file and their lines never interleave. A batch is
written when `flush_lines` events wait (64), when the first of them has waited `flush_ms` (100 ms;
a background thread, `flusher.py`), when they pass 1 MB, and at `flush()`, `close()`, interpreter
exit and before a fork. So a crash (a kill, a power cut) loses at most the events recorded in the
last `flush_ms`, and never more than `flush_lines - 1` of them, plus a torn last line; an exit
that skips `atexit` (`os._exit`, a fatal signal) is a crash. `flush_lines=1` writes every event
before `record` returns, as before batching. The file is made, and the header written, with the
first batch (at the latest `flush_ms` after the recorder is made), so `path` is final only then.
The header is written only by whoever finds the file empty. A file that is not empty must be this
session's: a recorder never appends under another session's header (a file left by an older
stretto whose names were not unique); it records to a file of its own beside it instead, and
says so.

A write that fails (a full disk, a vanished mount) never raises into the agent: the unwritten
lines wait in memory, in order, and the background thread retries them, backing off (from
`RETRY_FIRST_SECONDS`, doubling, to `RETRY_MAX_SECONDS`); `record()` then only appends to the
backlog, so the agent's own thread never pays for a failing disk. The backlog is bounded
(`backlog_bytes`, 64 MiB): nothing is lost up to the bound; past it, new events are dropped, and the
log says so once when the first is dropped and once, with the count, when the disk takes the
rest. `flush()` and `close()` always try at once. What still cannot be written at close goes to a
fallback file in the temp folder, and the log says where.

Any JSON a peer sends is recorded, lone surrogates (`"\\ud83d"`, a cut emoji) included: a line
that cannot be UTF-8 as it is, is written with its non-ASCII characters escaped, so it stays
valid UTF-8 and reads back to the same value.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import Any, Iterable

from stretto_core.sessions.model import (SESSION_FORMAT_VERSION, Event, LLMTurn, Lookup, SessionHeader, ToolCall,
                                        ToolResult, Usage, UserMessage, parse_json_content)
from stretto_core.sessions.files import HASH_CHARS, MAX_NAME_BYTES, SESSION_SUFFIX, encode_line, session_filename
from stretto_core.sessions.flusher import FLUSHER
from stretto_core.private import open_private, private_dir

log = logging.getLogger("stretto.recorder")

FALLBACK_FOLDER = "stretto-unsaved"
"""Folder in the system temp dir that receives what could not be written by `close()`."""

_write = os.write
"""The one call that puts bytes on disk; tests replace it to simulate a full disk."""

_PARSE = object()

HEADER_PEEK_BYTES = 1 << 20
"""How much of an existing file's first line is read to learn whose session it is."""

FLUSH_LINES = 64
"""Events that may wait in memory; the one that fills the batch writes it before `record` returns."""

FLUSH_MS = 100.0
"""How long the first waiting event waits before the background thread writes the batch."""

FLUSH_BYTES = 1 << 20
"""Waiting bytes that write the batch at once, whatever the count: bounds the memory held."""

BACKLOG_BYTES = 64 << 20
"""Bytes of events a recorder keeps in memory while its disk fails; events past it are dropped."""

RETRY_FIRST_SECONDS = 0.5
"""After a failed write, the background thread retries after this long, then twice as long..."""

RETRY_MAX_SECONDS = 30.0
"""...up to this long between retries."""


@dataclass
class _Line:
    data: bytes
    is_header: bool = False


class SessionRecorder:
    """Appends one session's events to `<directory>/<session id>.jsonl` as they happen.

    `fsync=True` also forces each batch to the disk (slower; a batch written survives a power cut,
    not just a crash). `flush_lines` and `flush_ms` bound what waits in memory (module docstring);
    `flush_lines=1` writes each event at once. `stamp=True` fills a missing `at` (and the header's
    `started_at`) with the time now. Recording after `close()` reopens the file. Safe to share
    between threads.
    """

    def __init__(self, directory: str | Path, header: SessionHeader, *, fsync: bool = False,
                 stamp: bool = True, fallback_dir: str | Path | None = None,
                 flush_lines: int = FLUSH_LINES, flush_ms: float = FLUSH_MS,
                 backlog_bytes: int = BACKLOG_BYTES) -> None:
        if flush_lines < 1 or flush_ms < 0:
            raise ValueError(f"flush_lines must be >= 1 and flush_ms >= 0, not {flush_lines} and {flush_ms}")
        if header.stretto_session != SESSION_FORMAT_VERSION:  # writers write the current version
            header = header.model_copy(update={"stretto_session": SESSION_FORMAT_VERSION})
        if stamp and header.started_at is None:
            header = header.model_copy(update={"started_at": _now()})
        self.header = header
        self.path = Path(directory) / session_filename(header.session_id)
        self.fsync = fsync
        self.stamp = stamp
        self.fallback_dir = Path(fallback_dir or Path(tempfile.gettempdir()) / FALLBACK_FOLDER)
        self.fallback_path: Path | None = None
        self._backlog: deque[_Line] = deque([_Line(_encode(header), is_header=True)])
        self._fd: int | None = None
        self._failing = False
        self._unlocked_warned = False
        self._owned = False
        """The file at `path` is known to be empty or this session's."""
        self._moved = False
        self.flush_lines = flush_lines
        self.flush_seconds = flush_ms / 1000.0
        self._waiting_bytes = 0
        self.backlog_bytes = backlog_bytes
        self._retry_delay = 0.0
        self._retry_at = 0.0
        self._retry_pending = False
        self.dropped = 0
        """Events dropped since the disk last took a write (the backlog was full)."""
        self._dropped_bytes = 0
        self._scheduled = False
        self._closed = False
        self._mutex = threading.Lock()
        FLUSHER.track(self)
        self._scheduled = True  # the file is made and the header written off the agent's path
        FLUSHER.schedule(self, self.flush_seconds)

    @property
    def pending(self) -> int:
        """How many events wait in memory for the disk (a waiting header not counted)."""
        return len(self._backlog) - (1 if self._backlog and self._backlog[0].is_header else 0)

    def record(self, event: Event) -> None:
        """Append one event; never raises on a failed write (see the module docstring)."""
        if self.stamp and event.at is None:
            event = event.model_copy(update={"at": _now()})
        try:
            line = _Line(_encode(event))
        except Exception as exc:  # noqa: BLE001 - an event that cannot be written is left out, said once
            log.warning("stretto: an event of session %s cannot be written as JSON (%s); left out",
                        self.header.session_id, type(exc).__name__)
            return
        with self._mutex:
            self._closed = False
            if self._failing:  # the background thread retries, backing off; the agent only appends
                self._keep_while_failing(line)
                return
            self._backlog.append(line)
            self._waiting_bytes += len(line.data)
            if self.pending >= self.flush_lines or self._waiting_bytes >= FLUSH_BYTES:
                self._flush()
            elif not self._scheduled:
                self._scheduled = True
                FLUSHER.schedule(self, self.flush_seconds)

    def _keep_while_failing(self, line: _Line) -> None:
        """Keep a line for the retry, within the backlog's bound; past it, drop it (said once)."""
        if self._waiting_bytes + len(line.data) > self.backlog_bytes:
            if not self.dropped:
                log.warning("stretto: session file %s cannot be written and %d bytes of events wait; "
                            "new events of this session are dropped until the disk takes them",
                            self.path, self._waiting_bytes)
            self.dropped += 1
            self._dropped_bytes += len(line.data)
            return
        self._backlog.append(line)
        self._waiting_bytes += len(line.data)
        if not self._retry_pending:  # e.g. recording again after a close that saved a fallback
            self._retry_later()

    def flush(self) -> bool:
        """Write what waits now; False when the write failed (the lines keep waiting)."""
        with self._mutex:
            return self._flush()

    def due_flush(self) -> bool:
        """The background thread's flush: while the disk fails, only at the retry's time."""
        with self._mutex:
            if self._failing and time.monotonic() < self._retry_at:
                return False  # an earlier deadline (a batch's): the retry has its own
            return self._flush()

    def forked(self) -> None:
        """In a forked child (only this thread exists): the lines still waiting are the parent's to
        write (it flushed before the fork, so only a failing disk leaves any), and a lock held by
        a thread that did not come along would never be released."""
        self._mutex = threading.Lock()
        self._scheduled = False
        self._backlog = deque(line for line in self._backlog if line.is_header)
        self._waiting_bytes = 0
        self._failing, self._retry_delay, self.dropped, self._dropped_bytes = False, 0.0, 0, 0
        self._retry_pending = False

    # Convenience for adapters: one call per kind of event.

    def user(self, text: str = "", calls: Iterable[ToolCall] = ()) -> None:
        self.record(UserMessage(text=text, calls=list(calls)))

    def llm_turn(self, text: str = "", calls: Iterable[ToolCall] = (), usage: Usage | None = None) -> None:
        self.record(LLMTurn(text=text, calls=list(calls), usage=usage))

    def tool_result(self, call_id: str, tool: str, content: str = "", *, error: bool = False,
                    parsed: Any = _PARSE) -> None:
        """The result of a call; `parsed` defaults to the content's JSON, when it is JSON."""
        parsed = parse_json_content(content) if parsed is _PARSE else parsed
        self.record(ToolResult(call_id=call_id, tool=tool, content=content, parsed=parsed, error=error))

    def lookup(self, call_id: str, tool: str, arguments: dict[str, Any], content: str = "",
               **fields: Any) -> None:
        """A read stretto made; `fields` are the other `Lookup` fields (after_call_id, score...)."""
        fields.setdefault("parsed", parse_json_content(content))
        self.record(Lookup(call_id=call_id, tool=tool, arguments=arguments, content=content, **fields))

    def close(self) -> Path | None:
        """Write what waits; what cannot be written goes to a fallback file, whose path is returned."""
        with self._mutex:
            self._closed = True
            if not self._flush() and self._save_fallback():  # keep an unwritten header for a reopen
                self._backlog = deque(line for line in self._backlog if line.is_header)
            self._close_fd()
        return self.fallback_path

    def _close_fd(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None

    def __enter__(self) -> "SessionRecorder":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _flush(self) -> bool:
        """Write the backlog in order, under the file lock; False (and warn once) when it fails."""
        self._scheduled = self._retry_pending = False
        if not self._backlog or (self._closed and self.pending == 0):
            return True  # (after a close that saved a fallback, a retry has no header-only file to make)
        try:
            fd = self._open()
            locked = self._lock(fd)
            try:
                while not self._owned and not self._claim(fd):
                    if locked:
                        fcntl.flock(fd, fcntl.LOCK_UN)
                        locked = False
                    self._close_fd()
                    fd = self._open()
                    locked = self._lock(fd)
                self._append(fd, self._backlog)
                self._backlog.clear()
                self._waiting_bytes = 0
            finally:
                if locked:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError as exc:
            if not self._failing:
                log.warning("stretto: cannot write session file %s (%s); keeping the unwritten "
                            "events in memory (up to %d bytes) and retrying in the background",
                            self.path, exc.strerror or exc, self.backlog_bytes)
            self._failing = True
            self._retry_later()
            return False
        if self._failing:
            log.warning("stretto: session file %s is writable again; the waiting events are written",
                        self.path)
            if self.dropped:
                log.warning("stretto: %d events (%d bytes) of session %s were dropped while the disk "
                            "failed (the backlog holds %d bytes at most)", self.dropped,
                            self._dropped_bytes, self.header.session_id, self.backlog_bytes)
            self._failing, self._retry_delay, self.dropped, self._dropped_bytes = False, 0.0, 0, 0
        self._sync(fd)
        return True

    def _retry_later(self) -> None:
        """Ask the background thread to retry, each time waiting twice as long (to a cap)."""
        self._retry_delay = min(RETRY_MAX_SECONDS, max(RETRY_FIRST_SECONDS, 2 * self._retry_delay))
        self._retry_at = time.monotonic() + self._retry_delay
        self._retry_pending = True
        FLUSHER.schedule(self, self._retry_delay)

    def _open(self) -> int:
        if self._fd is None:
            private_dir(self.path.parent)
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            self._fd = open_private(self.path, flags)
        return self._fd

    def _claim(self, fd: int) -> bool:
        """True when the file is empty or this session's. Else (once) move `path` to a file of our
        own beside it and return False; the caller then opens that one. Called under the lock."""
        other = _owner(fd)
        if other is None or other == self.header.session_id:
            self._owned = True
            return True
        if self._moved:  # our own file is taken as well: keep the lines, as for a full disk
            raise OSError(errno.EEXIST, f"{self.path} holds the session {other!r}")
        theirs, self._moved = self.path, True
        self.path = self.path.with_name(_own_name(self.path, self.header.session_id))
        log.warning("stretto: %s holds another session (%r), not %r; recording to %s instead",
                    theirs, other, self.header.session_id, self.path)
        return False

    def _lock(self, fd: int) -> bool:
        """Take the file lock; where the file system has none (some NFS), write without it."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return True
        except OSError as exc:
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                raise
            if not self._unlocked_warned:
                log.warning("stretto: cannot lock %s (%s); appending without the lock",
                            self.path, exc.strerror or exc)
                self._unlocked_warned = True
            return False

    def _append(self, fd: int, lines: Iterable[_Line]) -> None:
        """The lines in one write. The caller holds the lock, so the file's end is ours alone."""
        end = os.fstat(fd).st_size
        # a header is left out when another process (or an earlier run) already wrote one
        data = b"".join(line.data for line in lines if not (line.is_header and end > 0))
        if not data:
            return
        if end > 0 and os.pread(fd, 1, end - 1) != b"\n":
            data = b"\n" + data  # end a line torn by a crash, so this one stays whole
        try:
            written = _write(fd, data)
            if written != len(data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        except OSError:
            _truncate(fd, end)  # take back a partial batch; the whole batch is retried later
            raise

    def _sync(self, fd: int) -> None:
        if self.fsync:
            try:
                os.fsync(fd)
            except OSError as exc:
                log.warning("stretto: fsync of %s failed (%s)", self.path, exc.strerror or exc)

    def _save_fallback(self) -> bool:
        """Write the header and every waiting event to a fresh file in the fallback folder."""
        lines = [line.data for line in self._backlog if not line.is_header]
        try:
            private_dir(self.fallback_dir)
            fd, name = tempfile.mkstemp(prefix=self.path.stem + ".", suffix=".jsonl",
                                        dir=self.fallback_dir)
            with os.fdopen(fd, "wb") as fh:
                fh.write(b"".join([_encode(self.header), *lines]))
        except OSError as exc:
            log.error("stretto: could not write %d events to %s, nor to the fallback folder %s (%s); "
                      "they follow here:\n%s", len(lines), self.path, self.fallback_dir,
                      exc.strerror or exc, b"".join(lines).decode("utf-8", "replace"))
            return False
        self.fallback_path = Path(name)
        log.warning("stretto: could not write %d events to %s; saved them with the header to %s",
                    len(lines), self.path, self.fallback_path)
        return True


def _encode(model: SessionHeader | Event) -> bytes:
    """The JSONL line of a header or event; a value JSON cannot hold is kept as its text, and a
    value nested too deeply to write is left out (`parsed`) or replaced by a note (`arguments`)."""
    try:
        return encode_line(model).encode()
    except Exception:  # noqa: BLE001 - e.g. an argument that is an arbitrary Python object
        pass
    for mode in ("json", "python"):  # a lone surrogate: the same JSON, its non-ASCII escaped
        try:
            data = model.model_dump(mode=mode, exclude_none=True)
            return (json.dumps(data, default=_as_text, ensure_ascii=True) + "\n").encode()
        except Exception:  # noqa: BLE001 - an odd object (python mode) or too deep (both): see below
            pass
    update: dict[str, Any] = {}
    if getattr(model, "parsed", None) is not None:
        update["parsed"] = None
    if getattr(model, "arguments", None):
        update["arguments"] = {"stretto_unwritable": "the arguments could not be written as JSON"}
    if getattr(model, "calls", None):
        update["calls"] = [c.model_copy(update={"arguments": {"stretto_unwritable": "not JSON"}})
                           for c in model.calls]  # type: ignore[union-attr]
    if not update:
        raise ValueError("a session line that cannot be written as JSON")
    return _encode(model.model_copy(update=update))


def _as_text(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


def _owner(fd: int) -> str | None:
    """The session id a file's header names; None for an empty file, "" when it names none."""
    if os.fstat(fd).st_size == 0:
        return None
    head = os.pread(fd, HEADER_PEEK_BYTES, 0).split(b"\n", 1)[0]
    try:
        data = json.loads(head)
    except (ValueError, RecursionError):
        return ""
    sid = data.get("session_id") if isinstance(data, dict) else None
    return sid if isinstance(sid, str) else ""


def _own_name(path: Path, session_id: str) -> str:
    """The file name a session moves to when its own name is another session's: unique to the id."""
    digest = hashlib.sha256(("moved:" + session_id).encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    stem = path.name[:-len(SESSION_SUFFIX)].encode("utf-8")[:MAX_NAME_BYTES - HASH_CHARS - 1]
    return stem.decode("utf-8", errors="ignore") + "~" + digest + SESSION_SUFFIX


def _truncate(fd: int, size: int) -> None:
    try:
        os.ftruncate(fd, size)
    except OSError:
        pass  # the torn bytes stay; the next line starts with a newline and the reader skips them


def _now() -> datetime:
    return datetime.now(timezone.utc)
