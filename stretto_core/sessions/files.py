"""Where a session lives on disk and how one of its lines is written: shared by store and recorder.

A session's file is named after its id, and no two ids share a name: an id made only of letters,
digits and `-_.=+@` that fits in `MAX_NAME_BYTES` bytes of UTF-8 is its own file name (so the
names of such ids never change); any other id is sanitized (other characters become `_`), cut to
fit, and followed by `~` and a hash of the raw id. No id that names itself holds a `~`, so the
two kinds never meet, and two different ids share a name only if their hashes collide.
"""

from __future__ import annotations

import hashlib

from stretto_core.sessions.model import Event, SessionHeader

SESSION_SUFFIX = ".jsonl"

MAX_NAME_BYTES = 200
"""A file name's stem is at most this many bytes, so that the name, the store's temporary
`<name>.tmp<pid>` and the recorder's fallback `<stem>.<random>.jsonl` all fit in 255 bytes."""

HASH_CHARS = 16
"""Hex digits of the raw id's SHA-256 after the `~` of a sanitized name (64 bits)."""

_SAFE = frozenset("-_.=+@")


def _sanitized(session_id: str) -> str:
    return "".join(ch if ch.isalnum() or ch in _SAFE else "_" for ch in session_id)


def _cut_to_bytes(text: str, limit: int) -> str:
    """The longest prefix of `text` whose UTF-8 takes at most `limit` bytes."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")


def session_stem(session_id: str) -> str:
    """The file name of a session without its suffix (see the module docstring)."""
    safe = _sanitized(session_id)
    if safe == session_id and len(safe.encode("utf-8")) <= MAX_NAME_BYTES:
        return safe
    digest = hashlib.sha256(session_id.encode("utf-8", errors="surrogatepass")).hexdigest()[:HASH_CHARS]
    return f"{_cut_to_bytes(safe, MAX_NAME_BYTES - HASH_CHARS - 1)}~{digest}"


def session_filename(session_id: str) -> str:
    """A file name for a session id, unique to it (see the module docstring)."""
    return session_stem(session_id) + SESSION_SUFFIX


def encode_line(model: SessionHeader | Event) -> str:
    """One JSONL line for a header or event; fields left at None are omitted."""
    return model.model_dump_json(exclude_none=True) + "\n"
