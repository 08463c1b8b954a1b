"""Recorded sessions as episodes a procedure is compiled from: a ticket, calls in order, an ending.

Solo sessions have no user: the ticket is what the agent was given (τ²-bench keeps it in the
task, so the caller passes it, or a demonstration carries it in `labels["ticket"]`). An episode
ends with a stop (the agent's last turn made no call), a handoff (its last call was the tool that
hands the ticket to a person), or open (the record just ends).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Literal

from stretto_core.procedures.state import Step
from stretto_core.sessions.model import LLMTurn, Session, ToolResult

Ending = Literal["stop", "handoff", "open"]

TICKET_LABEL = "ticket"
"""The session label that carries a solo ticket (demonstrations write it)."""

SOURCE_LABEL = "procedure_source"
"""The session label that says what body of sessions it belongs to (`demonstration`)."""


@dataclass
class Episode:
    """One successful (or not) solo episode, ready to compile from."""

    session_id: str
    task_id: str
    ticket: str
    steps: list[Step]
    ending: Ending
    reward: float | None = None
    agent: str | None = None
    source: str = "recorded"
    kinds: dict[str, str] = field(default_factory=dict)


def kinds_of(session: Session) -> dict[str, str]:
    """Tool kinds from the session's manifest: `read`, `write`, or `generic`."""
    manifest = session.header.manifest
    if manifest is None:
        return {}
    return {name: spec.kind.value for name, spec in manifest.tools.items()}


def episode_of(session: Session, ticket: str | None = None, kinds: dict[str, str] | None = None,
               handoff: str | None = None) -> Episode:
    """The episode of one session; the ticket from the argument, else the session's label."""
    text = ticket if ticket is not None else session.header.labels.get(TICKET_LABEL, "")
    tool_kinds = dict(kinds_of(session), **(kinds or {}))
    results = session.results_by_call()
    steps: list[Step] = []
    turns = session.llm_turns()
    for turn in turns:
        for call in turn.calls:
            result = results.get(call.call_id)
            content = result.content if isinstance(result, ToolResult) else ""
            error = result.error if isinstance(result, ToolResult) else True
            steps.append(Step.of(call.tool, call.arguments, content, error, tool_kinds.get(call.tool, "generic")))
    last_event = next((e for e in reversed(session.events) if isinstance(e, LLMTurn)), None)
    if steps and handoff is not None and steps[-1].tool == handoff:
        ending: Ending = "handoff"
    elif last_event is not None and not last_event.calls:
        ending = "stop"
    else:
        ending = "open"
    return Episode(session_id=session.session_id, task_id=session.header.task_id or session.session_id,
                   ticket=text, steps=steps, ending=ending, reward=session.header.reward,
                   agent=session.header.agent_model,
                   source=session.header.labels.get(SOURCE_LABEL, "recorded"), kinds=tool_kinds)


def episodes_of(sessions: Iterable[Session], tickets: Callable[[str], str | None] | None = None,
                kinds: dict[str, str] | None = None, handoff: str | None = None) -> list[Episode]:
    """Episodes of many sessions; `tickets(task_id)` supplies a ticket a session does not carry."""
    out = []
    for session in sessions:
        ticket = session.header.labels.get(TICKET_LABEL)
        if ticket is None and tickets is not None and session.header.task_id is not None:
            ticket = tickets(session.header.task_id)
        out.append(episode_of(session, ticket, kinds, handoff))
    return out
