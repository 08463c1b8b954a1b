"""What a session file says out of order: results naming calls never made, times running back.

A session's events are in the order they happened, and each result answers a call made before
it. A file that breaks this (a hand edit, a merge of two files, a harness's bug) is still read,
but what is wrong is said, naming the file and line, so that a count built on it is not trusted
blindly. So is a session id read twice from two files.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone

from stretto_core.sessions.model import Event, LLMTurn, Lookup, ToolResult, UserMessage

log = logging.getLogger("stretto.store")

MAX_LOGGED = 5
"""Warnings logged per file; the rest are only counted in the report."""


@dataclass
class EventOrder:
    """Watches one file's events, in file order, and collects `(line, warning)` pairs."""

    path: str
    warnings: list[tuple[int, str]] = field(default_factory=list)
    _calls: set[str] = field(default_factory=set)
    _early: dict[str, int] = field(default_factory=dict)
    """Call id -> the line of a result that named it before any call did."""
    _last_at: datetime | None = None
    _last_line: int = 0

    def see(self, line: int, event: Event) -> None:
        if isinstance(event, (LLMTurn, UserMessage)):
            for call in event.calls:
                self._call(line, call.call_id)
        elif isinstance(event, Lookup):
            self._call(line, event.call_id)
        elif isinstance(event, ToolResult) and event.call_id not in self._calls:
            self._early.setdefault(event.call_id, line)
        at = _utc(event.at)
        if at is not None:
            if self._last_at is not None and at < self._last_at:
                self._warn(line, f"its time {event.at.isoformat()} is before line {self._last_line}'s: "
                                 f"events out of order")
            self._last_at, self._last_line = at, line

    def finish(self) -> list[tuple[int, str]]:
        """The warnings, results naming calls no line made included; logged (up to MAX_LOGGED)."""
        for call_id, line in self._early.items():
            self._warn(line, f"a result names call id {call_id!r}, which no call in the session made")
        self._early.clear()
        self.warnings.sort()
        for line, text in self.warnings[:MAX_LOGGED]:
            log.warning("%s:%d: %s", self.path, line, text)
        if len(self.warnings) > MAX_LOGGED:
            log.warning("%s: %d more warnings like these", self.path, len(self.warnings) - MAX_LOGGED)
        return self.warnings

    def _call(self, line: int, call_id: str) -> None:
        self._calls.add(call_id)
        early = self._early.pop(call_id, None)
        if early is not None:
            self._warn(early, f"the result of call {call_id!r} comes before the call (line {line}): "
                              f"events out of order")

    def _warn(self, line: int, text: str) -> None:
        self.warnings.append((line, text))


def _utc(at: datetime | None) -> datetime | None:
    if at is None:
        return None
    return at.replace(tzinfo=timezone.utc) if at.tzinfo is None else at


@dataclass
class SeenIds:
    """Session ids read so far, and from which file: a second file with one is said, once each."""

    first: dict[str, str] = field(default_factory=dict)

    def check(self, session_id: str, path: str) -> str | None:
        """A warning when `session_id` was already read from another file, else None."""
        before = self.first.setdefault(session_id, path)
        if before == path:
            return None
        warning = f"{path}: session id {session_id!r} was already read from {before}; both are kept"
        log.warning(warning)
        return warning
