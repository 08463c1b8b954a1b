"""At which decisions the class lift is counted, and at what weight: the price of the lift against its data.

The class lift (`named.count_decision`) is counted at results of the agent's own calls. Where
the binding evidence is counted next (the next event is a turn calling a read with a string or
number value: `sources.count_value` reads every pool's fresh picks then, the pools and the
user's words as they stood at the result), the lift's picks are the evidence's, made once for
both; elsewhere (the agent writes, answers the user, or a parallel result follows) they are made
for the lift alone, about a third of learning's time on τ² retail. The modes
(`BindingOptions.class_lift`, `stretto learn --class-lift`):

- `full`: every decision, weight 1 (the lift as published);
- `visited`: only the decisions the evidence visits, weight 1: no picks made for the lift alone;
- `sample`: a deterministic half of the decisions (a hash of the session id and the result's
  call id), weight 2: counts as many decisions as `full` in expectation;
- `off`: none: the flow has no class lift (ρ as learned for every class).
"""

from __future__ import annotations

import zlib

from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Session, ToolResult
from stretto_core.sessions.values import normalize

FULL, BATCH, THIN, VISITED, SAMPLE, OFF = "full", "batch", "thin", "visited", "sample", "off"
CLASS_LIFT_MODES = (FULL, BATCH, THIN, VISITED, SAMPLE, OFF)
DEFAULT_CLASS_LIFT = FULL

THIN_EVERY = 2
"""`thin` counts one in this many of the decisions the evidence does not visit (at this weight)."""


def decisions_counted(session: Session, manifest: ToolManifest, mode: str,
                      user_calls: frozenset[str] | set[str] = frozenset()) -> dict[str, float] | None:
    """The call id of each result whose decision is counted -> its weight (None: every one, at 1);
    `user_calls`: the calls the user ran (their results are no decision)."""
    if mode == FULL:
        return None
    if mode == OFF:
        return {}
    sid = session.session_id
    if mode == SAMPLE:
        return {e.call_id: 2.0 for e in session.events
                if isinstance(e, ToolResult) and _drawn(sid, e.call_id, 2)}
    if mode not in (VISITED, BATCH, THIN):
        raise ValueError(f"class lift mode is one of {', '.join(CLASS_LIFT_MODES)}, not {mode!r}")
    visited = set(visited_by_evidence(session, manifest))
    if mode == VISITED:
        return {c: 1.0 for c in visited}
    out: dict[str, float] = {}
    for call_id, run in last_of_runs(session, user_calls):
        if mode == BATCH or call_id in visited:
            out[call_id] = float(run)
        elif _drawn(sid, call_id, THIN_EVERY):
            out[call_id] = float(run * THIN_EVERY)
    return out


def last_of_runs(session: Session, user_calls: frozenset[str] | set[str]) -> list[tuple[str, int]]:
    """The last result of each run of the agent's results with no other event between (the
    results of one turn's parallel calls), and how many results the run holds: the run's
    decisions are counted at its last, the reads called after each being the same."""
    out: list[tuple[str, int]] = []
    run = 0
    events = session.events
    for event, after in zip(events, [*events[1:], None]):
        if isinstance(event, ToolResult) and event.call_id not in user_calls:
            run += 1
            if not (isinstance(after, ToolResult) and after.call_id not in user_calls):
                out.append((event.call_id, run))
                run = 0
    return out


def _drawn(session_id: str, call_id: str, every: int) -> bool:
    """A deterministic draw of one in `every` (a hash of the session id and the call id)."""
    return zlib.crc32(f"{session_id}\n{call_id}".encode()) % every == 0


def visited_by_evidence(session: Session, manifest: ToolManifest) -> list[str]:
    """The results right before a turn that calls a read with a string or number value (so the
    evidence reads every pool's fresh picks as they stood at the result)."""
    events = session.events
    out = []
    for event, after in zip(events, events[1:]):
        if isinstance(event, ToolResult) and isinstance(after, LLMTurn) and _evidence_counted(after, manifest):
            out.append(event.call_id)
    return out


def _evidence_counted(turn: LLMTurn, manifest: ToolManifest) -> bool:
    for call in turn.calls:
        if manifest.is_read(call.tool):
            for value in call.arguments.values():
                if isinstance(value, (str, int, float)) and not isinstance(value, bool) and normalize(value) is not None:
                    return True
    return False
