"""A whole-file lock and positioned reads that work on every platform stretto runs on.

A session file is appended to by one recorder at a time, under an exclusive lock on the open
file. POSIX has `fcntl.flock`; Windows has `msvcrt.locking` (a lock on a byte range: the first
byte, taken by every writer, serves as the whole file's lock); a platform with neither appends
without a lock (as on a file system that has none), which loses nothing while one process
writes each session (the recorder's case). Positioned reads (`os.pread`) fall back to a seek
and a read where the OS has none.
"""

from __future__ import annotations

import os
from typing import Any

try:
    import fcntl as _fcntl
except ImportError:  # Windows
    _fcntl = None  # type: ignore[assignment]

try:
    import msvcrt as _msvcrt
except ImportError:  # POSIX
    _msvcrt = None  # type: ignore[assignment]

KIND = "flock" if _fcntl is not None else "msvcrt" if _msvcrt is not None else "none"
"""Which lock this platform gives: `flock`, `msvcrt`, or `none`."""


def lock_file(fd: int) -> bool:
    """Take the exclusive lock on an open file (waiting for it); False where there is no lock to take."""
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_EX)
        return True
    if _msvcrt is not None:
        _at_start(fd, lambda: _msvcrt.locking(fd, _msvcrt.LK_LOCK, 1))
        return True
    return False


def unlock_file(fd: int) -> None:
    """Release the lock `lock_file` took."""
    if _fcntl is not None:
        _fcntl.flock(fd, _fcntl.LOCK_UN)
    elif _msvcrt is not None:
        _at_start(fd, lambda: _msvcrt.locking(fd, _msvcrt.LK_UNLCK, 1))


def _at_start(fd: int, act: Any) -> None:
    """msvcrt locks bytes from the current position: lock the first byte, then go back."""
    here = os.lseek(fd, 0, os.SEEK_CUR)
    os.lseek(fd, 0, os.SEEK_SET)
    try:
        act()
    finally:
        os.lseek(fd, here, os.SEEK_SET)


def read_at(fd: int, size: int, offset: int) -> bytes:
    """`os.pread`, or a seek and a read where the OS has no pread."""
    pread = getattr(os, "pread", None)
    if pread is not None:
        return pread(fd, size, offset)
    here = os.lseek(fd, 0, os.SEEK_CUR)
    try:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, size)
    finally:
        os.lseek(fd, here, os.SEEK_SET)
