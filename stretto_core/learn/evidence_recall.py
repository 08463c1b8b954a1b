"""How often the evidence test of a served lookup catches a read the agent really used.

A served lookup is taught as the agent's call only with evidence of use (`served.py`: a value it
was the first to show turns up in the agent's later calls or text). The test misses reads whose
answer the agent restates rather than repeats (a price range, a rating too short to count), so a
site whose lookups the agent needed is taught fewer uses than it had, and the next flow backs off
there. The test's recall can be measured where the answer is known: on the agent's *own* read
calls, each put in a lookup's place (`call_as_lookup`, what the session would have held had
stretto answered it) and tested as a served lookup is (`recall`).

`benchmarks/evidence_recall.py` prints it; the `weighed` rule takes it (`missed_uses.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from stretto_core.learn.first_source import first_shown
from stretto_core.learn.served import shows_use
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import Event, LLMTurn, Lookup, Session, ToolCall, ToolResult


@dataclass
class Recall:
    """Of a read tool's calls put in a lookup's place: how many were tested, how many caught."""

    tested: int = 0
    caught: int = 0


def call_as_lookup(session: Session, call_id: str) -> Session:
    """The session as if stretto had answered the agent's call `call_id`: the call gone from its
    turn (the turn gone if it made no other call, as a recorder of a served session leaves it)
    and its result a lookup in the result's place."""
    call = _call(session, call_id)
    events: list[Event] = []
    for event in session.events:
        if isinstance(event, LLMTurn) and call is not None and call in event.calls:
            remaining = [c for c in event.calls if c.call_id != call_id]
            if remaining:
                events.append(event.model_copy(update={"calls": remaining}))
        elif isinstance(event, ToolResult) and event.call_id == call_id:
            events.append(Lookup(call_id=call_id, tool=event.tool, arguments=dict(call.arguments) if call else {},
                                 content=event.content, parsed=event.parsed, error=event.error))
        else:
            events.append(event)
    return Session(header=session.header, events=events)


def recall(sessions: Iterable[Session], manifest: ToolManifest, said: bool = True) -> dict[str, Recall]:
    """Per read tool, how many of the agent's own calls of it (errors left out) the evidence test
    would have caught had a lookup answered them (`said`: the agent's text counts, as in `said`)."""
    out: dict[str, Recall] = {}
    for session in sessions:
        for call_id, tool in _read_calls(session, manifest):
            view = call_as_lookup(session, call_id)
            lookup = next(e for e in view.events if isinstance(e, Lookup) and e.call_id == call_id)
            fresh = first_shown(view).get(call_id, set())
            counted = out.setdefault(tool, Recall())
            counted.tested += 1
            counted.caught += int(shows_use(view, lookup, manifest, said=said, fresh=fresh))
    return out


def tool_recall(sessions: Iterable[Session], manifest: ToolManifest, prior: float = 0.5,
                weight: float = 5.0) -> dict[str, float]:
    """Per read tool, the test's recall on these (recorded) sessions, pulled toward `prior` as if
    `weight` more calls had been tested at it: a tool tested twice is not known to be blind."""
    return {tool: (r.caught + prior * weight) / (r.tested + weight)
            for tool, r in recall(sessions, manifest).items()}


def _read_calls(session: Session, manifest: ToolManifest) -> list[tuple[str, str]]:
    """The agent's read calls that returned a result without error, as (call id, tool)."""
    results = {e.call_id: e for e in session.events if isinstance(e, ToolResult)}
    out: list[tuple[str, str]] = []
    for event in session.events:
        if not isinstance(event, LLMTurn):
            continue
        for call in event.calls:
            result = results.get(call.call_id)
            if result is not None and not result.error and manifest.is_read(call.tool):
                out.append((call.call_id, call.tool))
    return out


def _call(session: Session, call_id: str) -> ToolCall | None:
    """The agent's call of that id, if it made one."""
    for event in session.events:
        if isinstance(event, LLMTurn):
            for call in event.calls:
                if call.call_id == call_id:
                    return call
    return None
