"""At which decisions the class lift is counted, and at what weight: the price of the lift against its data.

The class lift (`named.count_decision`) is counted at results of the agent's own calls. Where
the binding evidence is counted next (the next event is a turn calling a read with a string or
number value: `sources.count_value` reads every pool's fresh picks then, the pools and the
user's words as they stood at the result), the lift's picks are the evidence's, made once for
both; elsewhere (the agent writes, answers the user, or another result of the same turn
follows) they are made for the lift alone: on τ² retail's train split 184 of 548 decisions are
visited, and the lift costs two fifths of learning. The modes (`BindingOptions.class_lift`,
`stretto learn --class-lift`; measured in docs/speculator.md):

- `full` (the default): every decision, weight 1, the lift as published;
- `thin`: the results of one turn's parallel calls counted at the last of them (at the weight
  of their number: the reads called after each are the same), every decision the evidence
  visits, and of the rest one in `THIN_EVERY` by a deterministic draw (a hash of the session id
  and the result's call id) at `THIN_EVERY` times the weight: as many decisions as `full` in
  expectation, at a fraction of the picks;
- `visited`: only the decisions the evidence visits, weight 1 (no picks made for the lift
  alone; biased: they are the decisions a read follows);
- `off`: none: the flow has no class lift.
"""

from __future__ import annotations

import zlib

from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Session, ToolResult
from stretto_core.sessions.values import is_scalar, normalize

FULL, THIN, VISITED, OFF = "full", "thin", "visited", "off"
CLASS_LIFT_MODES = (FULL, THIN, VISITED, OFF)

THIN_EVERY = 3
"""`thin` counts one in this many of the decisions the evidence does not visit (at this weight)."""


def decisions_counted(session: Session, manifest: ToolManifest, mode: str,
                      user_calls: frozenset[str] | set[str] = frozenset()) -> dict[str, float] | None:
    """The call id of each result whose decision is counted -> its weight (None: every one, at 1);
    `user_calls`: the calls the user ran (their results are no decision)."""
    if mode == FULL:
        return None
    if mode == OFF:
        return {}
    if mode not in (VISITED, THIN):
        raise ValueError(f"class lift mode is one of {', '.join(CLASS_LIFT_MODES)}, not {mode!r}")
    visited = set(visited_by_evidence(session, manifest))
    if mode == VISITED:
        return {c: 1.0 for c in visited}
    out: dict[str, float] = {}
    for call_id, run in last_of_runs(session, user_calls):
        if call_id in visited:
            out[call_id] = float(run)
        elif _drawn(session.session_id, call_id):
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


def _drawn(session_id: str, call_id: str) -> bool:
    """A deterministic draw of one in `THIN_EVERY` (a hash of the session id and the call id)."""
    return zlib.crc32(f"{session_id}\n{call_id}".encode()) % THIN_EVERY == 0


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
                if is_scalar(value) and normalize(value) is not None:  # a value `evidence._count_call` counts
                    return True
    return False
