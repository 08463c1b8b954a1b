"""A flow file watched for a new version: each new session serves the flow committed by then.

A running app keeps serving while `stretto flow commit` (or `rollback`, or a plain `learn --out`)
replaces its flow file. Every writer replaces the file atomically (`sessions/jsonfile.py`: a temp
file renamed over it), so a reader opens the old file or the new one, never a part of either.

At each new session the watcher takes one `stat` of the path (inode, size, mtime, ctime): the same
key means the same file, and nothing is read. A new key means a new file: its bytes are read once,
hashed, and loaded with every check `load_flow` makes; the new flow serves the sessions that start
from then on, while running sessions keep the one they started with. A file that fails to load (a
hand edit, a flow of another version) is logged once and the old flow kept; a file that vanishes
keeps the old flow too. A file younger than `YOUNG_SECONDS` is also hashed at each session, for a
file system's clock can give two writes of the same size the same mtime (and a freed inode number
is reused).

Before the first flow exists (day one) the watcher serves nothing; the first flow written there is
served from the next session on.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generic, TypeVar

from stretto_core.errors import InputError, StrettoError, snippet
from stretto_core.flow.history import flow_sha256
from stretto_core.flow.ir import Flow, load_flow_bytes

log = logging.getLogger("stretto")

YOUNG_SECONDS = 2.0
"""A file modified this recently is hashed at each new session, not only when its stat changes."""

Built = TypeVar("Built")


@dataclass(frozen=True)
class LoadedFlow(Generic[Built]):
    """One version of a flow file as loaded: the flow, what was built from it, and its stamp."""

    flow: Flow
    built: Built
    sha256: str
    version: int | None


def in_memory(flow: Flow, built: Built) -> LoadedFlow[Built]:
    """A flow given as an object, stamped by the hash of its JSON (what a file of it would hold)."""
    data = (flow.to_json() + "\n").encode("utf-8")
    return LoadedFlow(flow, built, flow_sha256(data), flow.provenance.version)


class FlowWatcher(Generic[Built]):
    """The newest loadable flow at `path`, and what `build` makes of it, checked at each `current()`.

    `build` turns a loaded flow into what sessions use (an engine); it runs once per version.
    Safe to share between threads: one thread reloads while the others serve the old version.
    """

    def __init__(self, path: str | Path, build: Callable[[Flow], Built]) -> None:
        self.path = Path(path)
        self.build = build
        self._loaded: LoadedFlow[Built] | None = None
        self._key: tuple[int, int, int, int] | None = None
        self._refused: tuple[int, int, int, int] | None = None
        self._vanished = False
        self._lock = threading.Lock()

    def start(self) -> LoadedFlow[Built] | None:
        """Load the file now, when it exists; a file that exists and fails to load raises (a bad
        flow at startup is the operator's to fix at once, not a log line to find later)."""
        key = self._stat()
        if key is None:
            return None
        try:
            data = self.path.read_bytes()
        except OSError as exc:  # a folder, or a file this user may not read
            raise InputError(str(self.path), f"cannot read the flow file: {exc.strerror or exc}") from None
        self._loaded = self._load(data)
        self._key = key
        return self._loaded

    @property
    def loaded(self) -> LoadedFlow[Built] | None:
        """The version sessions start with now (without looking at the file again)."""
        return self._loaded

    def current(self) -> LoadedFlow[Built] | None:
        """The version a session starting now serves: the file's newest loadable one."""
        key = self._stat()
        if key is None:
            if self._loaded is not None and not self._vanished:
                self._vanished = True
                log.warning("stretto: the flow file %s is gone; serving the flow loaded before", self.path)
            return self._loaded
        self._vanished = False
        if key == self._key and not self._young(key) or key == self._refused:
            return self._loaded
        with self._lock:  # one thread reads the new file; the others wait for it, briefly
            if key == self._key and not self._young(key):
                return self._loaded
            self._reload(key)
        return self._loaded

    def _reload(self, key: tuple[int, int, int, int]) -> None:
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            log.warning("stretto: cannot read the flow file %s (%s); serving the flow loaded before",
                        self.path, exc.strerror or exc)
            return
        sha = flow_sha256(data)
        if self._loaded is not None and sha == self._loaded.sha256:
            self._key = key
            return
        try:
            loaded = self._load(data)
        except (StrettoError, ValueError, ArithmeticError, RecursionError) as exc:
            if self._refused != key:
                log.warning("stretto: the new flow file %s does not load (%s); serving the flow loaded "
                            "before", self.path, snippet(str(exc), 300))
            self._refused = key
            return
        self._loaded, self._key, self._refused = loaded, key, None
        log.info("stretto: serving %s%s from the next session on", self.path,
                 f" (version {loaded.version})" if loaded.version is not None else "")

    def _load(self, data: bytes) -> LoadedFlow[Built]:
        flow = load_flow_bytes(data, self.path)
        return LoadedFlow(flow, self.build(flow), flow_sha256(data), flow.provenance.version)

    def _stat(self) -> tuple[int, int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    @staticmethod
    def _young(key: tuple[int, int, int, int]) -> bool:
        return time.time_ns() - max(key[2], key[3]) < YOUNG_SECONDS * 1e9
