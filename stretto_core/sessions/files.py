"""Where a session lives on disk and how one of its lines is written: shared by store and recorder."""

from __future__ import annotations

from stretto_core.sessions.model import Event, SessionHeader

SESSION_SUFFIX = ".jsonl"


def session_filename(session_id: str) -> str:
    """A file name for a session id: unsafe characters become `_`."""
    safe = "".join(ch if ch.isalnum() or ch in "-_.=+@" else "_" for ch in session_id)
    return safe[:200] + SESSION_SUFFIX


def encode_line(model: SessionHeader | Event) -> str:
    """One JSONL line for a header or event; fields left at None are omitted."""
    return model.model_dump_json(exclude_none=True) + "\n"
