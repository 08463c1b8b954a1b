"""Which values of each lookup's result the agent saw there first: the only ones that show it read it.

A served session shows that the agent read a lookup when a value of the lookup's result turns up
later in the agent's calls or text (`learn/served.py`). A value the agent could have had from
somewhere else shows nothing about *this* lookup: a field name every result of the tool carries
(`origin`, `passengers`), the user's name that every reservation repeats, an id an earlier result
or the user already gave. Counted as evidence, such values turned nearly every lookup into the
agent's own call: on τ² airline's claude-opus-4-6, chained `get_reservation_details` lookups the
agent would not have made (issue 25). So a value counts for the lookup that first showed it, and
for no other. A value of several lines (AgentDojo's `'Rating: 4.3\nReviews: ...'`) also counts line
by line, and a `key: value` line by its value: an agent quotes a review, not the whole block.
"""

from __future__ import annotations

from stretto_core.sessions.model import LLMTurn, Lookup, Session, ToolResult, UserMessage
from stretto_core.sessions.values import argument_leaves, index_result, normalize


def first_shown(session: Session) -> dict[str, set[str]]:
    """Per shown lookup (by call id), the normalized values of its result that no earlier event
    held: not an earlier result or shown lookup, not a value the agent passed in a call, not text
    the user or the agent wrote, and not one of the lookup's own arguments."""
    seen: set[str] = set()
    texts: list[str] = []
    fresh: dict[str, set[str]] = {}
    for event in session.events:
        if isinstance(event, Lookup):
            if event.abandoned:
                continue
            values = _with_parts(set(index_result(event.content, event.parsed).first_path))
            given = _leaves(event.arguments)
            written = "\n".join(texts)
            fresh[event.call_id] = {v for v in values if v not in seen and v not in given and v not in written}
            seen |= values
        elif isinstance(event, ToolResult):
            seen |= _with_parts(set(index_result(event.content, event.parsed).first_path))
        elif isinstance(event, (UserMessage, LLMTurn)):
            texts.append(event.text.casefold())
            for call in event.calls:
                seen |= _leaves(call.arguments)
    return fresh


def _leaves(arguments: dict) -> set[str]:
    """The normalized scalars an argument set passes."""
    return {key for key in map(normalize, argument_leaves(arguments)) if key is not None}


def _with_parts(values: set[str]) -> set[str]:
    """The values, and each line of a value of several lines (the value of a `key: value` line too)."""
    out = set(values)
    for value in values:
        if "\n" not in value:
            continue
        for line in value.splitlines():
            line = line.strip()
            if line:
                out.add(line)
                key, colon, rest = line.partition(": ")
                if colon and rest.strip():
                    out.add(rest.strip())
    return out
