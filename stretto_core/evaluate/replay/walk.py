"""The walk every replay shares: feed the engine an episode as the agent would have lived it.

The agent is taken to act as recorded, except that it does not make a call a lookup already
answered (paper §3, "Replay"). So the engine sees every event of the record but those: an
answered call is dropped from its turn, a turn whose calls were all answered is dropped whole
(a saved turn), and an answered call's result never arrives. After each of the agent's tool
responses that does arrive, the engine decides (Algorithm 1) until it hands back.

Where a lookup's result comes from, and which later call it answers, is the one thing the two
replays do differently; a `Source` says it (`replay_record.RecordSource`, `replay_env.EnvSource`).
The walk keeps the books: every lookup, which call it answered, and the decision trace that lets
a sweep reuse an episode's replay at another threshold (`replay.replay_thetas`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from stretto_core.serve.engine import Engine, EngineSession
from stretto_core.evaluate.replay.episode import CallInfo, PreparedEpisode
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Lookup, ToolResult, UserMessage
from stretto_core.serve.speculator import Decision, weigh_all
from stretto_core.sessions.state import call_key
from stretto_core.sessions.values import argument_leaves, normalize


@dataclass(slots=True)
class LookupRecord:
    """One lookup made in replay, and what became of it."""

    number: int
    decision: int
    response: int
    """The index of the tool response it rode on, among the responses the engine saw."""
    event_index: int
    """The index in the episode's events of the result after which it was made."""
    tool: str
    arguments: dict[str, Any]
    key: str
    site: str
    score: float
    reach: float
    binding: float
    content: str
    error: bool
    stand_in: bool = False
    stand_in_of_same_call: bool = False
    """The stand-in is a recorded result of this very call (made across a write)."""
    from_stand_in: bool = False
    """Strict record replay: an argument value came from another call's stand-in, so the lookup
    may not be the one a live speculator, seeing the real result, would have made."""
    claimed: CallInfo | None = None
    in_flight: bool = False
    """It was the same call as one the agent had already made in the same turn (used, saves nothing)."""
    transient: bool = False
    """The call it matched got a transient failure (`sessions.failures`): neither used nor a detour,
    it is reported apart and answers nothing."""


@dataclass(slots=True)
class Candidate:
    """One candidate weighed at one decision (`--weigh`)."""

    decision: int
    response: int
    tool: str
    key: str
    site: str
    reach: float
    next_p: float
    binding: float
    used: bool
    made: bool


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One call of `decide`: where, at what threshold, and the score it made (None: handed back).

    `budget` marks a hand-back forced by a lookup budget, which no threshold changes.
    """

    site: str
    threshold: float
    score: float | None
    budget: bool = False


class Source(Protocol):
    """Where lookups' results come from and which calls they answer: the record or an environment."""

    def answered_in_turn(self, walk: "Walk", event_index: int, turn: LLMTurn) -> set[str]:
        """The ids of the turn's calls that lookups made before it answer."""
        ...

    def user_result(self, walk: "Walk", call: CallInfo | None, result: ToolResult) -> ToolResult:
        """The result the engine sees of the user's call (τ² telecom's phone)."""
        ...

    def agent_result(self, walk: "Walk", call: CallInfo | None, result: ToolResult,
                     answered: bool) -> ToolResult:
        """The result the engine sees of the agent's call (answered calls too run, but are not seen)."""
        ...

    def make_lookup(self, walk: "Walk", decision: Decision, event_index: int,
                    record: LookupRecord) -> None:
        """Fill in the lookup's result (and, if known now, the call it answers)."""
        ...


def replay_authority(episode: PreparedEpisode) -> ToolManifest:
    """The authority on tool kinds a replayed episode is served under: the tools its own harness
    listed (its header's manifest), narrowed by the manifest it was read under when that is
    another (the operator's `--manifest` for its app: a tool either does not mark read is never
    looked up); a session recorded without one gets the manifest it was read under. A replay is
    never left to the flow file's own word on which tools are reads, nor given a tool another
    harness of the same benchmark has."""
    own, read_under = episode.header.manifest, episode.manifest
    if own is None:
        return read_under
    return own if read_under is own or read_under == own else own.narrowed(read_under)


@dataclass
class Walk:
    """One episode's replay in progress: the engine session and the books."""

    episode: PreparedEpisode
    engine: Engine
    source: Source
    weigh: bool = False
    session: EngineSession = field(init=False)
    lookups: list[LookupRecord] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    trace: list[TraceStep] = field(default_factory=list)
    answered: set[str] = field(default_factory=set)
    """The ids of the agent's calls that a lookup answered (the agent does not make them)."""
    claimed: set[str] = field(default_factory=set)
    """The ids of the calls a lookup was matched to: answered, or in flight when it was made."""
    saved_turns: list[int] = field(default_factory=list)
    response_events: list[int] = field(default_factory=list)
    """The event index of each tool response the engine saw, in order: its decision points."""
    decisions: int = 0
    stand_in_ids: set[str] = field(default_factory=set)
    """The engine's call ids of lookups whose results were another call's stand-ins."""

    def __post_init__(self) -> None:
        solo = self.episode.header.solo
        self.session = self.engine.session(live_manifest=replay_authority(self.episode), solo=solo)
        if self.session.served:  # the walk asks where any earlier value came from: the full state
            self.session = EngineSession(self.engine, self.session.guard, served=False, solo=solo)

    def run(self) -> "Walk":
        """Walk every event of the episode once, in order."""
        episode = self.episode
        for index, event in enumerate(episode.events):
            if isinstance(event, UserMessage):
                self.session.observe(event)
            elif isinstance(event, LLMTurn):
                self._turn(index, event)
            elif isinstance(event, ToolResult):
                self._result(index, event)
            elif isinstance(event, Lookup):
                continue  # stretto's own lookups at record time: this replay makes its own
        return self

    def claim(self, record: LookupRecord, call: CallInfo, in_flight: bool) -> None:
        """Match a lookup to a call it answers, or to one the agent made in the same turn."""
        record.claimed = call
        record.in_flight = in_flight
        self.claimed.add(call.call_id)
        if not in_flight:
            self.answered.add(call.call_id)

    def unclaimed_reachable(self, key: str, event_index: int) -> CallInfo | None:
        """The first of the agent's calls of `key` that a lookup made now reaches, not yet claimed."""
        for call in self.episode.reachable_calls(key, event_index):
            if call.call_id not in self.claimed:
                return call
        return None

    def _turn(self, index: int, turn: LLMTurn) -> None:
        if not turn.calls:
            self.session.observe(turn)
            return
        answered = self.source.answered_in_turn(self, index, turn)
        remaining = [c for c in turn.calls if c.call_id not in answered]
        if not remaining:
            self.saved_turns.append(self.episode.turn_at_event[index])
            return
        self.session.observe(turn if len(remaining) == len(turn.calls)
                             else turn.model_copy(update={"calls": remaining}))

    def _result(self, index: int, result: ToolResult) -> None:
        call = self.episode.calls.get(result.call_id)
        if call is not None and call.result_index != index:
            return  # a second result of one call: the first is its result
        if call is not None and not call.by_agent:
            self.session.observe(self.source.user_result(self, call, result))
            return
        answered = call is not None and call.call_id in self.answered
        seen = self.source.agent_result(self, call, result, answered)
        if answered:
            return
        self.session.observe(seen)
        self.response_events.append(index)
        self._decide(index, seen.call_id)

    def _decide(self, index: int, after_call_id: str) -> None:
        """Algorithm 1 after one tool response: decide, look up, absorb, until the engine hands back."""
        session, engine = self.session, self.engine
        cfg = engine.config
        if cfg.shadow:
            return
        response = len(self.response_events) - 1
        while True:
            site = session.site
            threshold = engine.model.threshold(site, cfg.theta)
            if session.lookups_this_call >= cfg.per_call or session.lookups_total >= cfg.per_session:
                self.trace.append(TraceStep(site, threshold, None, budget=True))
                return
            weighed = self._weigh(index, response) if self.weigh else None
            decision = session.decide()
            self.trace.append(TraceStep(site, threshold, decision.score if decision else None))
            if weighed is not None:
                self._log_candidates(weighed, decision)
            self.decisions += 1
            if decision is None:
                return
            record = LookupRecord(len(self.lookups), self.decisions - 1, response, index,
                                  decision.tool, decision.arguments,
                                  call_key(decision.tool, decision.arguments), decision.site,
                                  decision.score, decision.reach, decision.binding, "", False)
            self.source.make_lookup(self, decision, index, record)
            self.lookups.append(record)
            made = session.add_lookup(decision, record.content, record.error, after_call_id)
            if record.stand_in and not record.stand_in_of_same_call:
                self.stand_in_ids.add(made.call_id)

    def from_stand_in(self, arguments: dict[str, Any]) -> bool:
        """Whether some argument value's newest holder in the engine's state is a stand-in.

        Bindings take values from the newest results that hold them; when that is a stand-in,
        the value is the record's answer to another call, not what this lookup would have seen.
        """
        if not self.stand_in_ids:
            return False
        entries = self.session.state.results
        for leaf in argument_leaves(arguments):
            value = normalize(leaf)
            if value is None:
                continue
            newest = next((e for e in reversed(entries) if e.ok and value in e.index.first_path), None)
            if newest is not None and newest.call_id in self.stand_in_ids:
                return True
        return False

    def _weigh(self, index: int, response: int) -> list[Candidate]:
        """Every permitted read that binds now, with both scores and whether the agent makes it."""
        session = self.session
        out = []
        for c in weigh_all(session.model, session.guard, session.state, session.history, session.site):
            key = call_key(c.tool, c.arguments)
            used = self.unclaimed_reachable(key, index) is not None
            out.append(Candidate(self.decisions, response, c.tool, key, session.site, c.reach,
                                 c.next_p, c.binding, used, False))
        return out

    def _log_candidates(self, weighed: list[Candidate], decision: Decision | None) -> None:
        made = call_key(decision.tool, decision.arguments) if decision is not None else None
        for cand in weighed:
            cand.made = cand.key == made
        self.candidates.extend(weighed)
