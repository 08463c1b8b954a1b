"""Reading and writing the small JSON files stretto keeps (manifests, splits, flows, replays).

Whatever is wrong with such a file (missing, a folder, not UTF-8, not JSON, nested too deeply,
NaN where a number should be) is an InputError naming it, never a traceback; and a file is
written only where it can be (its folder made when missing, never over a folder).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stretto_core.errors import InputError, StrettoError, snippet
from stretto_core.private import private_dir, write_private_bytes, write_private_text


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name}, which is not a number JSON can hold")


def read_json_file(path: str | Path, what: str) -> Any:
    """The JSON value of a file; InputError naming the file for any way it cannot be one.

    `NaN` and `Infinity` (which Python's JSON writes and reads, but JSON has not) are refused.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(str(p), f"cannot read the {what}: {exc.strerror or exc}") from exc
    return parse_json_bytes(data, p, what)


def parse_json_bytes(data: bytes, path: str | Path, what: str) -> Any:
    """The JSON value of a file's bytes already read (so a reader can hash exactly what it parsed)."""
    p = Path(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(str(p), f"the {what} is not UTF-8 text ({exc.reason} at byte {exc.start}; a "
                                 f"binary file, or another encoding such as UTF-16)") from exc
    if not text.strip():
        raise InputError(str(p), f"the {what} is empty")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise InputError(str(p), f"the {what} is not JSON ({exc.msg}, column {exc.colno})", exc.lineno) from exc
    except ValueError as exc:
        raise InputError(str(p), f"the {what} holds {snippet(str(exc), 80)}") from exc
    except RecursionError as exc:
        raise InputError(str(p), f"the {what} is nested too deeply to be one") from exc


def output_path(path: str | Path, what: str = "file") -> Path:
    """A path a file can be written to: its folder made when missing; a StrettoError naming it when
    it is a folder, or its folder cannot be made. Verbs call it before any work, so a typo fails fast."""
    p = Path(path)
    if p.is_dir():
        raise StrettoError(f"{p}: is a folder; give the {what}'s file name")
    try:
        private_dir(p.parent)
    except OSError as exc:
        raise StrettoError(f"{p}: cannot make its folder for the {what}: {exc.strerror or exc}") from exc
    return p


def write_text_file(path: str | Path, text: str, what: str = "file") -> Path:
    """Write a text file (UTF-8) where `output_path` allows, atomically, 0600 or the mode of the
    file it replaces (`private.py`); a failure is a StrettoError naming it."""
    p = output_path(path, what)
    try:
        write_private_text(p, text)
    except OSError as exc:
        raise StrettoError(f"{p}: cannot write the {what}: {exc.strerror or exc}") from exc
    return p


def write_atomic(path: str | Path, data: bytes) -> None:
    """Replace `path` with `data` so that a reader sees the old file or the new one, never a part
    (`private.write_private_bytes`: temp file, fsync, rename, folder sync). A file that existed keeps
    its permission bits; a new one is readable by its owner alone."""
    write_private_bytes(path, data)
