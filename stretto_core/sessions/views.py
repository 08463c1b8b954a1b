"""A session as a proxy between the agent and its tools sees it: calls and results, nothing else.

An MCP proxy (`stretto proxy`, the FastMCP middleware) sees no user words and no model turn
that made no call; it serves a flow knowing only the tool traffic. Replaying this view gives
what such a proxy can save on an episode (`evaluate.scripted.replay_turns(..., proxy_view=True)`),
which can differ from what an adapter inside the agent, seeing everything, saves: a lookup
bound from the user's words is out of the proxy's reach, and the reply steps in the flow's
history are missing.
"""

from __future__ import annotations

from stretto_core.sessions.model import LLMTurn, Session, UserMessage


def as_seen_by_a_proxy(session: Session) -> Session:
    """The session without user messages and replies; each turn with calls keeps only its calls."""
    events = []
    for event in session.events:
        if isinstance(event, UserMessage):
            continue
        if isinstance(event, LLMTurn):
            if not event.calls:
                continue
            event = event.model_copy(update={"text": "", "usage": None})
        events.append(event)
    return session.model_copy(update={"events": events})
