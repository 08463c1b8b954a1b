"""The reads an agent made after each of its results, before its next write.

What a decision at a result is judged by, wherever learning counts one beside the reach (the
user's words, `learn/intent.py`; whether the user named a record, `learn/bindings/named.py`):
one backward walk over the session, shared, so both count the same window.
"""

from __future__ import annotations

from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Session, ToolResult


def reads_before_write(session: Session, manifest: ToolManifest, user_calls: set[str]) -> dict[str, frozenset[str]]:
    """Call id of each of the agent's results -> the reads it called after it, before its next
    write (`user_calls`: the ids of calls the user ran, whose results are no decision)."""
    timeline: list[tuple[bool, str]] = []  # (a call, its tool) or (a result, its call id)
    for event in session.events:
        if isinstance(event, LLMTurn):
            timeline.extend((True, c.tool) for c in event.calls)
        elif isinstance(event, ToolResult) and event.call_id not in user_calls:
            timeline.append((False, event.call_id))
    later: frozenset[str] = frozenset()
    out: dict[str, frozenset[str]] = {}
    for is_call, name in reversed(timeline):
        if not is_call:
            out.setdefault(name, later)
        elif manifest.ends_reach(name):
            later = frozenset()
        elif manifest.is_read(name) and name not in later:
            later = later | {name}
    return out
