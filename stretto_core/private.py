"""Files stretto writes are its operator's alone: created 0600 in folders made 0700.

Sessions hold customers' words and tool results; traces, flows, version logs and host configs hold
argument values and commands. Every writer goes through here, so no file stretto makes is readable
by others. A file that is replaced (a flow rewritten, a host config edited) keeps the mode it had:
stretto never widens a file, and never narrows one the operator opened up on purpose.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

FILE_MODE = 0o600
"""The mode of a file stretto creates."""

DIR_MODE = 0o700
"""The mode of a folder stretto creates."""


def private_dir(path: str | Path) -> Path:
    """Make `path` and any missing parents as 0700 folders; folders that exist keep their mode."""
    p = Path(path)
    missing: list[Path] = []
    probe = p
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    p.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    for made in missing:  # mkdir's `parents` ignores `mode` for the parents; the umask may narrow it
        try:
            os.chmod(made, DIR_MODE)
        except OSError:
            pass
    return p


def mode_for(path: str | Path) -> int:
    """The mode a file written at `path` gets: the mode of the file it replaces, else 0600."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return FILE_MODE


def open_private(path: str | Path, flags: int, mode: int | None = None) -> int:
    """`os.open` with a file it creates made 0600 (or `mode`) exactly, whatever the umask; a file
    that already exists keeps its mode."""
    want = FILE_MODE if mode is None else mode
    existed = os.path.lexists(path)
    fd = os.open(path, flags, want)
    if flags & os.O_CREAT and not existed:
        try:
            os.fchmod(fd, want)
        except OSError:
            pass
    return fd


def append_private(path: str | Path, encoding: str = "utf-8"):  # noqa: ANN201 - a text file object
    """A text file opened for appending, created 0600 (a trace, a log)."""
    p = Path(path)
    private_dir(p.parent)
    fd = open_private(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0))
    return os.fdopen(fd, "a", encoding=encoding)


def write_private_bytes(path: str | Path, data: bytes, mode: int | None = None) -> Path:
    """Replace `path` with `data` so that a reader sees the old file or the new one, never a part: a
    temp file in the same folder (created 0600), written and fsynced, renamed over it, the folder
    synced. Created 0600, or with the mode of the file it replaces (`mode` overrides)."""
    p = Path(path)
    private_dir(p.parent)
    keep = mode_for(p) if mode is None else mode
    fd, temp = tempfile.mkstemp(prefix="." + p.name + ".", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temp, keep)
        os.replace(temp, p)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    _sync_folder(p.parent)
    return p


def _sync_folder(folder: Path) -> None:
    """Make a rename durable (where the platform lets a folder be fsynced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_private_text(path: str | Path, text: str, mode: int | None = None) -> Path:
    """`write_private_bytes` of UTF-8 text."""
    return write_private_bytes(path, text.encode("utf-8"), mode)
