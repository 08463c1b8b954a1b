"""One background thread that writes recorders' waiting lines when they have waited long enough.

A recorder asks for a flush at a deadline (`schedule`) when its first unwritten line arrives; the
thread sleeps until the earliest deadline and then calls that recorder's `flush()`, outside any lock
of its own. The thread is a daemon and is started on first use (and again in a forked child, where
it does not exist). At interpreter exit, and in a process about to fork, every live recorder is
flushed, so neither an exit nor a child inheriting the unwritten lines loses or doubles them.
"""

from __future__ import annotations

import atexit
import heapq
import itertools
import logging
import os
import threading
import time
import weakref
from typing import Protocol

log = logging.getLogger("stretto.recorder")


class Flushable(Protocol):
    def flush(self) -> bool: ...

    def forked(self) -> None:
        """In a forked child: forget the flush asked for, and what the parent still has to write."""


class Flusher:
    """Deadlines of recorders that wait for a flush, and the thread that meets them."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._due: list[tuple[float, int, Flushable]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._live: weakref.WeakSet[Flushable] = weakref.WeakSet()

    def track(self, recorder: Flushable) -> None:
        """Flush `recorder` at exit and before a fork, as long as it lives."""
        self._live.add(recorder)

    def schedule(self, recorder: Flushable, delay: float) -> None:
        """Call `recorder.flush()` from the background thread `delay` seconds from now; until then
        the recorder is held, so one dropped without `close()` still writes what waits."""
        with self._cond:
            heapq.heappush(self._due, (time.monotonic() + delay, next(self._order), recorder))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="stretto-recorder-flush", daemon=True)
                self._thread.start()
            self._cond.notify()

    def flush_all(self) -> None:
        """Write what every live recorder holds (at exit, before a fork)."""
        for recorder in list(self._live):
            try:
                recorder.flush()
            except Exception:  # noqa: BLE001 - an exit or fork must go on whatever a recorder does
                log.exception("stretto: flushing a session recorder failed")

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._cond.wait(None if not self._due else self._due[0][0] - time.monotonic())
                _, _, recorder = heapq.heappop(self._due)
            try:
                getattr(recorder, "due_flush", recorder.flush)()  # a failing disk: its own back-off
            except Exception:  # noqa: BLE001 - the thread must outlive any one recorder
                log.exception("stretto: a background flush of a session recorder failed")
            del recorder

    def _forked(self) -> None:
        """In a forked child: the thread did not come along, and neither did its lock's state."""
        self._cond = threading.Condition(threading.Lock())
        self._due = []
        self._thread = None
        for recorder in list(self._live):
            recorder.forked()


FLUSHER = Flusher()
atexit.register(FLUSHER.flush_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=FLUSHER.flush_all, after_in_child=FLUSHER._forked)
