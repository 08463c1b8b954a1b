"""The served loop: learn → serve → learn again, round after round, under each rule for served sessions.

A deployment relearns from the sessions its flow served. Serving changes what the agent did (it
skips the calls the lookups answered), so what a served session teaches decides whether the next
flow keeps saving or backs off where the last one paid (`learn/served.py`). This module runs the
loop by record replay: the agent acts as recorded except that it does not make a call a lookup
already answered (paper §3), and the session it leaves is the one a recorder would have written:
the answered calls gone, stretto's lookups in their place (`served_session`).

    round 0   the first batch is recorded (day one); flow₀ learns from it
    round r   batch r is served by flow_{r-1}; flow_r learns from batch 0 and every served
              batch, each session as the rule teaches it

Each round's flow is measured on that round's batch beside the flow learned once from the same
sessions as recorded, unserved (the reference): turns saved and detours. `paired_rounds.py`
scores each round's flow beside the reference's on the same, larger set of sessions neither
learned from (`rule_rounds` yields the flows).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

from stretto_core.evaluate.replay.episode import PreparedEpisode, prepare_session
from stretto_core.evaluate.replay.record import RecordSource
from stretto_core.evaluate.replay.run import ReplayOptions, build_engine
from stretto_core.evaluate.replay.tally import tally
from stretto_core.evaluate.replay.walk import LookupRecord, Walk
from stretto_core.flow.ir import Flow, learn
from stretto_core.learn.missed_uses import ToolRecall
from stretto_core.flow.stream import shards
from stretto_core.learn.served import MODE_LABEL, RULES, teaching_sessions
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.model import Event, LLMTurn, Lookup, Session, SessionHeader, ToolResult

HOLDOUT_FRACTION = 0.1
"""The `holdout` rule's control fraction: sessions served record-only (by a hash of the session id)."""

REFERENCE = "reference"
"""The row name of the flow learned from the same sessions as recorded."""


def with_mode(header: SessionHeader, mode: str) -> SessionHeader:
    """The header, saying how the session was served (its `mode` where the format has one)."""
    if "mode" in SessionHeader.model_fields:
        return header.model_copy(update={"mode": mode})
    return header.model_copy(update={"labels": {**header.labels, MODE_LABEL: mode}})


def served_session(walk: Walk) -> Session:
    """The session a recorder writes of a replayed episode: answered calls (and turns left with
    none) gone, each lookup after the result it rode on, and a call the agent made itself while
    a lookup of it was in flight marked as repeating it."""
    episode = walk.episode
    after: dict[int, list[LookupRecord]] = defaultdict(list)
    repeats: dict[str, str] = {}
    for number, record in enumerate(walk.lookups):
        after[record.event_index].append(record)
        if record.claimed is not None and record.in_flight:
            repeats.setdefault(record.claimed.call_id, f"stretto-{number + 1}")
    events: list[Event] = []
    numbers = {id(r): n + 1 for n, r in enumerate(walk.lookups)}
    for index, event in enumerate(episode.events):
        if isinstance(event, Lookup) or getattr(event, "kind", None) == "shadow_lookup":
            continue
        if isinstance(event, LLMTurn) and event.calls:
            remaining = [c for c in event.calls if c.call_id not in walk.answered]
            if not remaining:
                continue
            events.append(event if len(remaining) == len(event.calls) else event.model_copy(update={"calls": remaining}))
        elif isinstance(event, ToolResult):
            if event.call_id in walk.answered:
                continue
            events.append(event.model_copy(update={"repeats": repeats[event.call_id]})
                          if event.call_id in repeats else event)
            for record in after.get(index, ()):
                events.append(Lookup(call_id=f"stretto-{numbers[id(record)]}", tool=record.tool,
                                     arguments=record.arguments, content=record.content, error=record.error,
                                     after_call_id=event.call_id, site=record.site, score=round(record.score, 6),
                                     used=record.claimed is not None))
        else:
            events.append(event)
    return Session(header=with_mode(episode.header, "serve"), events=events)


def is_holdout(session: Session, fraction: float = HOLDOUT_FRACTION) -> bool:
    """Whether the session is in the control fraction served record-only (a hash of its id)."""
    digest = int(hashlib.sha1(session.session_id.encode()).hexdigest()[:8], 16)
    return digest / 0xFFFFFFFF < fraction


@dataclass
class RoundScore:
    """One flow replayed on one batch."""

    episodes: int = 0
    llm_turns: int = 0
    saved: int = 0
    detours: int = 0
    lookups: int = 0
    by_episode: list[tuple[str, int, int]] = field(default_factory=list)
    """(task, turns saved, detours) of each episode: what the round's spread is drawn from."""

    @property
    def saved_share(self) -> float:
        return self.saved / self.llm_turns if self.llm_turns else 0.0

    @property
    def detours_per_episode(self) -> float:
        return self.detours / self.episodes if self.episodes else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"episodes": self.episodes, "llm_turns": self.llm_turns, "saved": self.saved,
                "detours": self.detours, "lookups": self.lookups, "saved_share": round(self.saved_share, 4),
                "detours_per_episode": round(self.detours_per_episode, 4)}


def serve_batch(flow: Flow, sessions: Sequence[Session], theta: float = DEFAULT_THETA,
                holdout: Callable[[Session], bool] | None = None, env: bool = False) -> tuple[list[Session], RoundScore]:
    """Serve each session with the flow by record replay (`env`: each lookup run in the
    benchmark's real environment, `replay/env.py`): the sessions a recorder leaves, and the
    flow's score on the batch (a held-out session is recorded as it was, and scored too)."""
    engine = build_engine(FlowRuntime(flow), ReplayOptions(theta=theta, processes=1))
    score = RoundScore()
    out: list[Session] = []
    for s in sessions:
        episode: PreparedEpisode = prepare_session(s)
        if env:
            from stretto_core.evaluate.replay.env import EnvSource

            walk = Walk(episode, engine, EnvSource.open(episode)).run()
        else:
            walk = Walk(episode, engine, RecordSource()).run()
        row = tally(walk).row
        score.episodes += 1
        score.llm_turns += row.llm_turns
        score.saved += row.turns_saved
        score.detours += row.detours
        score.lookups += row.lookups
        score.by_episode.append((s.header.task_id or s.session_id, row.turns_saved, row.detours))
        if holdout is not None and holdout(s):
            out.append(Session(header=with_mode(s.header, "holdout"), events=list(s.events)))
        else:
            out.append(served_session(walk))
    return out, score


@dataclass
class LoopResult:
    """Per rule (and the reference), each round's score."""

    rounds: int
    batch: int
    rounds_by_rule: dict[str, list[RoundScore]] = field(default_factory=dict)


def batches_of(sessions: Sequence[Session], rounds: int) -> list[list[Session]]:
    """`rounds + 1` consecutive batches of as equal sizes as can be (batch 0 is recorded)."""
    return shards(list(sessions), rounds + 1)  # type: ignore[arg-type, return-value]


def rule_rounds(batches: Sequence[Sequence[Session]], rule: str, theta: float = DEFAULT_THETA,
                learn_flow: Callable[[Sequence[Session]], Flow] = learn,
                holdout_fraction: float = HOLDOUT_FRACTION, env: bool = False,
                recall_of: Callable[[Sequence[Session]], ToolRecall] | None = None,
                ) -> Iterator[tuple[RoundScore, Flow]]:
    """One rule's loop over the batches: per round r ≥ 1, flow_{r-1}'s score serving batch r, and
    flow_r, learned from batch 0 and the r served batches as the rule teaches them (`recall_of`:
    the evidence test's recall per tool, measured on batch 0, the recorded sessions)."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}: one of {', '.join(RULES)}")
    taught: list[Session] = list(batches[0])
    flow = learn_flow(taught)
    holdout = (lambda s: is_holdout(s, holdout_fraction)) if rule == "holdout" else None
    recall = recall_of(batches[0]) if recall_of is not None else None
    for batch in batches[1:]:
        served, score = serve_batch(flow, batch, theta, holdout, env)
        taught += list(teaching_sessions(served, rule, recall))
        flow = learn_flow(taught)
        yield score, flow


def run_loop(sessions: Sequence[Session], rules: Sequence[str] = RULES, rounds: int = 5,
             theta: float = DEFAULT_THETA, learn_flow: Callable[[Sequence[Session]], Flow] = learn,
             holdout_fraction: float = HOLDOUT_FRACTION, env: bool = False,
             recall_of: Callable[[Sequence[Session]], ToolRecall] | None = None) -> LoopResult:
    """The loop of the module docstring for each rule, and the reference beside it."""
    batches = batches_of(sessions, rounds)
    result = LoopResult(rounds=rounds, batch=len(batches[1]))
    reference: list[RoundScore] = []
    for r in range(1, rounds + 1):
        flow = learn_flow([s for b in batches[:r] for s in b])
        reference.append(serve_batch(flow, batches[r], theta, env=env)[1])
    result.rounds_by_rule[REFERENCE] = reference
    for rule in rules:
        result.rounds_by_rule[rule] = [score for score, _ in
                                       rule_rounds(batches, rule, theta, learn_flow, holdout_fraction, env, recall_of)]
    return result
