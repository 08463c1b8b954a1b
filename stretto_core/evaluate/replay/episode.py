"""One recorded episode, indexed once for any number of replays.

A replay asks the same questions of an episode again and again, at every decision and at every
threshold of a sweep: which of the agent's later calls is this one, does a write of the agent's
come first, what did the record return, how many turns are left. `prepare_session` answers them
up front, so a replay walks the events and looks things up; results are parsed once here, not
once per replay.

Time in an episode is a tick `(event index, sub)`: a call happens when its result is recorded
(`(result index, 0)`, the harness's execution order); a call with no recorded result never ran,
and sits just after the turn that made it (`(turn index, position + 1)`).

Token counts follow Appendix B: a text's tokens are its characters over CHARS_PER_TOKEN.
"""

from __future__ import annotations

import json
import logging
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

from stretto_core.errors import StrettoError
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import Event, LLMTurn, Session, SessionHeader, ToolResult, UserMessage
from stretto_core.sessions.failures import is_failure, is_transient_failure
from stretto_core.sessions.state import call_key
from stretto_core.sessions.turns import TurnClass, classify_turns
from stretto_core.sessions.values import TextResult, parse_result

log = logging.getLogger("stretto.replay")

CHARS_PER_TOKEN = 4
"""Tokens are counted as characters over four (Appendix B), for calls, results and lookups."""

EMPTY_STAND_IN = "{}"
"""The stand-in result of a detour whose tool the record never returned a result for."""

Tick = tuple[int, int]


def text_tokens(text: str) -> float:
    """The tokens of a text, as its characters over CHARS_PER_TOKEN."""
    return len(text) / CHARS_PER_TOKEN


def call_text(tool: str, arguments: dict[str, Any]) -> str:
    """A call as the agent's context carries it: the tool's name and its arguments as JSON."""
    return tool + json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class CallInfo:
    """One recorded call: who made it, when it was made and ran, and its result's index."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    key: str
    by_agent: bool
    is_read: bool
    ends_reach: bool
    """A write, or a tool that may be one (generic): it ends every lookup's reach. Pure tools do not."""
    issued_at: int
    """The index of the event that made the call (the agent's LLM turn, or the user's message)."""
    done_at: Tick
    """When the call ran: its result's tick, or just after the turn when it has no result."""
    result_index: int | None
    turn: int | None
    """The index of the agent's LLM turn among the episode's turns (None for the user's calls)."""
    tokens: float
    """The call's and its result's tokens."""
    transient: bool = False
    """Its recorded result is a transient failure (`sessions.failures`): no lookup is counted as answering it."""


@dataclass(frozen=True, slots=True)
class TurnInfo:
    """One LLM turn of the agent's: where it is, its calls, and what it cost."""

    event_index: int
    call_ids: tuple[str, ...]
    input_tokens: int | None
    turns_after: int
    ceiling: bool


@dataclass
class PreparedEpisode:
    """A session with every index a replay needs; built by `prepare_session`, never mutated."""

    header: SessionHeader
    events: list[Event]
    manifest: ToolManifest
    calls: dict[str, CallInfo]
    turns: list[TurnInfo]
    agent_calls_by_key: dict[str, list[CallInfo]]
    """Every agent call of a read, by call key, in the order they ran."""
    agent_write_ticks: list[Tick]
    """When each of the agent's calls that ends a lookup's reach ran (`ToolManifest.ends_reach`), in order."""
    turns_after_event: list[int]
    """For each event index, how many of the agent's LLM turns come after it."""
    results_by_tool: dict[str, list[int]]
    """Event indices of each tool's successful results, for stand-ins."""
    turn_at_event: dict[int, int]
    """The number of the agent's LLM turn at each event index that holds one."""
    ceiling_turns: int = 0
    input_tokens: int | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        return self.header.session_id

    def next_agent_write(self, tick: Tick) -> Tick | None:
        """When the agent's first write after `tick` runs, or None when there is none."""
        i = bisect_right(self.agent_write_ticks, tick)
        return self.agent_write_ticks[i] if i < len(self.agent_write_ticks) else None

    def reachable_calls(self, key: str, at_event: int) -> Iterable[CallInfo]:
        """The agent's calls of `key` that a lookup made after the result at `at_event` reaches:
        they run after it and before the agent's next write. Only calls with a recorded result."""
        calls = self.agent_calls_by_key.get(key)
        if not calls:
            return ()
        now = (at_event, 0)
        limit = self.next_agent_write(now)
        return (c for c in calls
                if c.done_at > now and (limit is None or c.done_at < limit) and c.result_index is not None)

    def result_of(self, call: CallInfo) -> ToolResult:
        assert call.result_index is not None
        return self.result_at(call.result_index)

    def stand_in(self, tool: str, key: str, at_event: int) -> tuple[str, bool, bool]:
        """A detour's stand-in: `(content, error, same call)`.

        The nearest recorded result of the same call (the agent's, after a write), else the
        nearest of the same tool (the earlier on a tie), else `{}`.
        """
        same = [c.result_index for c in self.agent_calls_by_key.get(key, ())
                if c.result_index is not None and not self.result_at(c.result_index).error]
        for indices, of_same_call in ((same, True), (self.results_by_tool.get(tool, []), False)):
            nearest = _nearest(indices, at_event)
            if nearest is not None:
                event = self.result_at(nearest)
                return event.content, event.error, of_same_call
        return EMPTY_STAND_IN, False, False

    def result_at(self, index: int) -> ToolResult:
        event = self.events[index]
        assert isinstance(event, ToolResult), f"event {index} of {self.session_id} is not a result"
        return event


def _nearest(indices: list[int], at: int) -> int | None:
    """The index in the sorted list nearest to `at`, the earlier on a tie."""
    if not indices:
        return None
    i = bisect_right(indices, at)
    around = [indices[j] for j in (i - 1, i) if 0 <= j < len(indices)]
    return min(around, key=lambda idx: (abs(idx - at), idx))


class EpisodeError(StrettoError):
    """A session that cannot be replayed; the message names the session and what is wrong."""


def prepare_session(session: Session, manifest: ToolManifest | None = None,
                    parse: bool = True) -> PreparedEpisode:
    """Index a session for replay.

    `manifest` says which tools are reads and which end a lookup's reach; by default the
    session's own. `parse` fills in each result's `parsed` once (JSON, Python literal, YAML), so
    that no replay parses it again; a result that is only text is left unparsed.
    """
    man = manifest or session.header.manifest
    if man is None:
        raise EpisodeError(f"session {session.session_id}: no manifest in its header and none "
                           "given, so its reads and writes are unknown")
    events = [_parsed(e) if parse and isinstance(e, ToolResult) else e for e in session.events]
    first_result: dict[str, int] = {}
    for index, event in enumerate(events):
        if isinstance(event, ToolResult):
            first_result.setdefault(event.call_id, index)

    llm_turns = [i for i, e in enumerate(events) if isinstance(e, LLMTurn)]
    turn_number = {event_index: n for n, event_index in enumerate(llm_turns)}
    classes = classify_turns(Session(header=session.header, events=events), man)

    calls: dict[str, CallInfo] = {}
    problems: list[str] = []
    for index, event in enumerate(events):
        if not isinstance(event, (LLMTurn, UserMessage)):
            continue
        by_agent = isinstance(event, LLMTurn)
        for position, call in enumerate(event.calls):
            if call.call_id in calls:
                problems.append(f"call id {call.call_id!r} is made twice; the second is ignored")
                continue
            result_index = first_result.get(call.call_id)
            if result_index is not None and result_index < index:
                problems.append(f"call {call.call_id!r}: its result comes before the call; ignored")
                result_index = None
            result = events[result_index] if result_index is not None else None
            done_at = (result_index, 0) if result_index is not None else (index, position + 1)
            text = call_text(call.tool, call.arguments) + (result.content if result is not None else "")
            calls[call.call_id] = CallInfo(
                call.call_id, call.tool, call.arguments, call_key(call.tool, call.arguments), by_agent,
                man.is_read(call.tool), man.ends_reach(call.tool), index, done_at, result_index,
                turn_number.get(index) if by_agent else None, text_tokens(text))

    n_turns = len(llm_turns)
    turns: list[TurnInfo] = []
    reported: list[int] = []
    for n, event_index in enumerate(llm_turns):
        event = events[event_index]
        assert isinstance(event, LLMTurn)
        tokens = event.usage.input_tokens if event.usage is not None else None
        if tokens is not None:
            reported.append(tokens)
        ids = tuple(c.call_id for c in event.calls if calls.get(c.call_id) is not None
                    and calls[c.call_id].issued_at == event_index)
        turns.append(TurnInfo(event_index, ids, tokens, n_turns - n - 1,
                              n < len(classes) and classes[n] is TurnClass.ceiling))

    writes = sorted(info.done_at for info in calls.values() if info.by_agent and info.ends_reach)
    for call_id in transient_failures(calls, events, writes):
        calls[call_id] = replace(calls[call_id], transient=True)
    by_key: dict[str, list[CallInfo]] = {}
    for info in calls.values():
        if info.by_agent and info.is_read:
            by_key.setdefault(info.key, []).append(info)
    for group in by_key.values():
        group.sort(key=lambda c: c.done_at)

    results_by_tool: dict[str, list[int]] = {}
    for index, event in enumerate(events):
        if isinstance(event, ToolResult) and not event.error:
            results_by_tool.setdefault(event.tool, []).append(index)

    after: list[int] = []
    seen = 0
    for event in reversed(events):
        after.append(seen)
        if isinstance(event, LLMTurn):
            seen += 1
    after.reverse()

    for problem in problems:
        log.warning("session %s: %s", session.session_id, problem)
    return PreparedEpisode(
        header=session.header, events=events, manifest=man, calls=calls, turns=turns,
        agent_calls_by_key=by_key, agent_write_ticks=writes, turns_after_event=after,
        results_by_tool=results_by_tool, turn_at_event=turn_number, ceiling_turns=sum(1 for t in turns if t.ceiling),
        input_tokens=sum(reported) if reported else None,
        problems=[f"session {session.session_id}: {p}" for p in problems])


def transient_failures(calls: dict[str, CallInfo], events: Sequence[Event], writes: Sequence[Tick]) -> set[str]:
    """The agent's read calls whose recorded result is a transient failure (`sessions.failures`):
    its text says the service failed, or the agent made the call again before its next write
    and got another result."""
    results: dict[str, list[CallInfo]] = {}
    for info in calls.values():
        if info.by_agent and info.is_read and info.result_index is not None:
            results.setdefault(info.key, []).append(info)
    out: set[str] = set()
    for group in results.values():
        group.sort(key=lambda c: c.done_at)
        for n, call in enumerate(group):
            got = events[call.result_index]  # type: ignore[index]
            assert isinstance(got, ToolResult)
            if not is_failure(got.content, got.error):
                continue
            i = bisect_right(writes, call.done_at)
            limit = writes[i] if i < len(writes) else None
            again = [events[c.result_index] for c in group[n + 1:] if limit is None or c.done_at < limit]
            retried = any((r.content, r.error) != (got.content, got.error) for r in again
                          if isinstance(r, ToolResult))
            if is_transient_failure(got.content, got.error, retried):
                out.add(call.call_id)
    return out


def prepare_sessions(sessions: Sequence[Session | PreparedEpisode],
                     manifest: ToolManifest | None = None) -> list[PreparedEpisode]:
    """Index every session (those already prepared are kept as they are)."""
    return [s if isinstance(s, PreparedEpisode) else prepare_session(s, manifest) for s in sessions]


def _parsed(result: ToolResult) -> ToolResult:
    if result.parsed is not None or result.error:
        return result
    structure = parse_result(result.content)
    if structure is None or isinstance(structure, TextResult):
        return result
    return result.model_copy(update={"parsed": structure})
