"""A session as abstract steps: what the agent did, how it went, and what its result showed.

The habit and the reach (`counts.py`) count sequences of abstract steps, never raw calls
(paper §2.4). A step is a triple

    step = (action, outcome, feature)

    action   the tool called, or REPLY for an LLM turn with no calls;
    outcome  tool steps: OK, or FAILED when the result is an error or none was recorded;
             replies:    ANSWERED when a user message follows before the agent's next LLM turn,
                         ENDED otherwise (the episode ended on it);
    feature  the id of the result's feature under a learned `FeatureMap` (`features.py`), or
             NO_FEATURE (0): no map, a tool the map does not read, a failed call, or a value
             combination never seen in training.

Arguments are abstracted away. Each call of a parallel turn is its own step, in the order the
agent made them. Only the agent's own calls are steps: the telecom user's calls on their phone
(`UserMessage.calls`) are not, and neither are the lookups stretto made (`Lookup` events).

A step's symbol, `action/outcome/feature` (e.g. `get_order_details/ok/0`), is its letter in
the alphabet the counts' contexts are written in. Tool names may contain `/`; the last two
fields never do, so `parse_symbol` splits from the right.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from stretto_core.sessions.model import LLMTurn, Session, ToolCall, ToolResult, UserMessage
from stretto_core.sessions.values import parse_result

REPLY = "reply"
"""The action of an LLM turn that made no calls: a message to the user, or the final answer."""

OK = "ok"
"""A tool step whose call returned a result that is not an error."""

FAILED = "failed"
"""A tool step whose call returned an error, or whose result was never recorded."""

ANSWERED = "answered"
"""A reply after which the user spoke before the agent's next LLM turn."""

ENDED = "ended"
"""A reply after which the user did not speak again before the next LLM turn or the end."""

OUTCOMES = (OK, FAILED, ANSWERED, ENDED)
"""Every outcome, in a fixed order (the order is part of no file format)."""

NO_FEATURE = 0
"""The feature id of a result with no learned feature."""


class FeatureSource(Protocol):
    """What the abstraction needs of a feature map (`features.FeatureMap` is one)."""

    def has_fields(self, tool: str) -> bool: ...

    def feature_of(self, tool: str, parsed: Any) -> int: ...


class Step(NamedTuple):
    """One abstract step: action, outcome and feature id."""

    action: str
    outcome: str
    feature: int = NO_FEATURE

    @property
    def symbol(self) -> str:
        return f"{self.action}/{self.outcome}/{self.feature}"

    @property
    def is_reply(self) -> bool:
        return self.outcome in (ANSWERED, ENDED)


def parse_symbol(symbol: str) -> Step:
    """The step a symbol names; the inverse of `Step.symbol`."""
    action, outcome, feature = symbol.rsplit("/", 2)
    return Step(action, outcome, int(feature))


def reply_step(answered: bool) -> Step:
    """The step of an LLM turn with no calls."""
    return Step(REPLY, ANSWERED if answered else ENDED, NO_FEATURE)


def step_of_result(tool: str, error: bool, content: str = "", parsed: Any = None,
                   feature_map: FeatureSource | None = None) -> Step:
    """The step of one of the agent's calls, from its result: for live use and for learning alike.

    The result is parsed (`values.parse_result`) only when the map reads this tool.
    """
    if error:
        return Step(tool, FAILED, NO_FEATURE)
    feature = NO_FEATURE
    if feature_map is not None and feature_map.has_fields(tool):
        feature = feature_map.feature_of(tool, parse_result(content, parsed))
    return Step(tool, OK, feature)


def missing_result_step(tool: str) -> Step:
    """The step of a call whose result was never recorded: it counts as failed."""
    return Step(tool, FAILED, NO_FEATURE)


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One step of a recorded session, with where it came from.

    `event_index` is the index in `session.events` of the LLM turn that made the call (or, for
    a reply, of the turn itself); `call` and `result` are None for replies, and `result` is
    None for a call whose result was never recorded.
    """

    step: Step
    symbol: str
    action: str
    event_index: int
    call: ToolCall | None = None
    result: ToolResult | None = None


def session_steps(session: Session, feature_map: FeatureSource | None = None) -> list[StepRecord]:
    """The agent's steps in a session, in order (see the module docstring for the rules)."""
    results: dict[str, ToolResult] = {}
    for event in session.events:
        if isinstance(event, ToolResult):
            results.setdefault(event.call_id, event)  # the first result of a call is its result
    events = session.events
    out: list[StepRecord] = []
    for index, event in enumerate(events):
        if not isinstance(event, LLMTurn):
            continue
        if not event.calls:
            step = reply_step(_answered(events, index))
            out.append(StepRecord(step, step.symbol, REPLY, index))
            continue
        for call in event.calls:
            result = results.get(call.call_id)
            if result is None:
                step = missing_result_step(call.tool)
            else:
                step = step_of_result(call.tool, result.error, result.content, result.parsed,
                                      feature_map)
            out.append(StepRecord(step, step.symbol, call.tool, index, call, result))
    return out


def session_symbols(session: Session, feature_map: FeatureSource | None = None) -> tuple[list[str], list[str]]:
    """The symbols and the actions of a session's steps: what `counts.Counts.add` takes."""
    records = session_steps(session, feature_map)
    return [r.symbol for r in records], [r.action for r in records]


def _answered(events: list[Any], index: int) -> bool:
    """Whether the user speaks after the reply at `index`, before the agent's next LLM turn."""
    for event in events[index + 1:]:
        if isinstance(event, UserMessage):
            return True
        if isinstance(event, LLMTurn):
            return False
    return False
