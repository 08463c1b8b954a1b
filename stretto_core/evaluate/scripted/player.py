"""A scripted agent's brain: a recorded episode's turns, minus the calls a lookup already answered.

To show an adapter works, a real SDK runs with a scripted model over a recorded episode: each
model call returns the next recorded turn. The one liberty the model takes is the replay's
(paper §3): it drops a call whose result it already holds from a lookup stretto appended to an
earlier result, and a turn whose calls were all dropped is never taken. Then the SDK run's LLM
turns can be compared, turn for turn, with `stretto replay --env` on the same episodes.

A lookup answers a call when it is the same call (tool and arguments) and returned what the
call returns now, which is what the record says (τ²-bench re-runs every recorded call
byte-identically); each lookup answers at most one call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Sequence

from stretto_core.serve.results import AppendedLookup, parse_appendix
from stretto_core.sessions.model import LLMTurn, Session, ToolCall, ToolResult, UserMessage
from stretto_core.sessions.state import call_key


@dataclass(frozen=True)
class ScriptTurn:
    """What the scripted model says next: calls to make, or text (a final answer when no calls)."""

    text: str
    calls: list[ToolCall]
    counted: bool = True
    """False for a closing turn the record does not have (a run must end with an answer)."""


@dataclass
class Segment:
    """The turns that follow one user message: one run of the SDK."""

    user_text: str
    turns: list[LLMTurn]


@dataclass
class _Held:
    key: str
    content: str
    error: bool
    claimed: bool = False


@dataclass
class EpisodePlayer:
    """Plays one recorded episode turn by turn, skipping what appended lookups answered."""

    session: Session
    llm_turns: int = 0
    saved_turns: int = 0
    closing_turns: int = 0
    answered_calls: int = 0
    held: list[_Held] = field(default_factory=list)
    _segments: list[Segment] = field(default_factory=list)
    _current: Segment | None = None
    _position: int = 0
    _in_flight: list[ToolCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._outcomes = {e.call_id: (e.content, e.error) for e in self.session.events
                          if isinstance(e, ToolResult)}
        manifest = self.session.header.manifest
        self._reads = set(manifest.reads()) if manifest is not None else set()
        segment: Segment | None = None
        for event in self.session.events:
            if isinstance(event, UserMessage):
                segment = Segment(event.text, [])
                self._segments.append(segment)
            elif isinstance(event, LLMTurn):
                if segment is None:
                    segment = Segment("", [])
                    self._segments.append(segment)
                segment.turns.append(event)

    @property
    def recorded_turns(self) -> int:
        """LLM turns in the record."""
        return sum(len(s.turns) for s in self._segments)

    def segments(self) -> Iterator[Segment]:
        """Each user message's segment in order; the player follows along as they are run."""
        for segment in self._segments:
            self._current, self._position = segment, 0
            yield segment
        self._current = None

    def next_turn(self, new_tool_outputs: Sequence[str] = ()) -> ScriptTurn:
        """The next turn to emit, given the tool results received since the previous one."""
        in_flight = self._in_flight if len(new_tool_outputs) == len(self._in_flight) else []
        for i, text in enumerate(new_tool_outputs):
            self.observe_output(text, later_calls=in_flight[i + 1:])
        self._in_flight = []
        segment = self._current
        while segment is not None and self._position < len(segment.turns):
            turn = segment.turns[self._position]
            self._position += 1
            if not turn.calls:
                self.llm_turns += 1
                return ScriptTurn(turn.text, [])
            remaining = [c for c in turn.calls if not self._answered(c)]
            if remaining:
                self.llm_turns += 1
                self._in_flight = remaining
                return ScriptTurn(turn.text, remaining)
            self.saved_turns += 1
        self.closing_turns += 1
        return ScriptTurn("", [], counted=False)

    def observe_output(self, text: str, later_calls: Sequence[ToolCall] = ()) -> None:
        """Take note of the lookups appended to one tool result the model received.

        A lookup of a call the agent already has in flight in the same turn (`later_calls`,
        whose results come after this one) is used by that call, as the replay counts it, and
        answers nothing later."""
        flying = {call_key(c.tool, c.arguments): c for c in later_calls}
        for lookup in parse_appendix(text):
            held = _held(lookup)
            call = flying.get(held.key)
            if call is not None and self._outcomes.get(call.call_id) == (held.content, held.error):
                held.claimed = True
                del flying[held.key]
            self.held.append(held)

    def _answered(self, call: ToolCall) -> bool:
        if call.tool not in self._reads or call.call_id not in self._outcomes:
            return False
        key = call_key(call.tool, call.arguments)
        outcome = self._outcomes[call.call_id]
        for held in reversed(self.held):  # the latest matching lookup, as the replay claims it
            if not held.claimed and held.key == key and (held.content, held.error) == outcome:
                held.claimed = True
                self.answered_calls += 1
                return True
        return False


def _held(lookup: AppendedLookup) -> _Held:
    return _Held(call_key(lookup.tool, lookup.arguments), lookup.content, lookup.failed)
