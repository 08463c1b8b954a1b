"""An episode's replay as rows: what it saved, what it cost, and every lookup and candidate.

Counts follow paper §2.2: a turn is saved when every call in it was answered; a lookup is used
when it answered a call, or was the same call as one the agent had already made in the same turn;
any other lookup is a detour. A used lookup was used before the speculator's next decision
(Appendix C) when the call it matched came before the next tool response the engine saw.

Costs follow Appendix B, in the agent's input tokens: a saved turn is worth its recorded input
tokens plus its calls' tokens (calls and results) times the turns after it; a detour costs its
result's tokens times the LLM turns left after the result that prompted it.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from stretto_core.evaluate.replay.episode import CHARS_PER_TOKEN, PreparedEpisode
from stretto_core.evaluate.replay.rows import EpisodeRow, LookupRow, WeighedRow
from stretto_core.evaluate.replay.walk import LookupRecord, TraceStep, Walk


@dataclass
class EpisodeReplay:
    """One episode replayed: its rows, and the decision trace a threshold sweep reuses."""

    row: EpisodeRow
    lookups: list[LookupRow] = field(default_factory=list)
    weighed: list[WeighedRow] = field(default_factory=list)
    trace: list[TraceStep] = field(default_factory=list)


def saved_turn_value(episode: PreparedEpisode, turn_number: int) -> float:
    """β of one saved turn: its input tokens plus its calls' tokens over the turns after it."""
    turn = episode.turns[turn_number]
    calls = sum(episode.calls[c].tokens for c in turn.call_ids)
    return (turn.input_tokens or 0) + calls * turn.turns_after


def result_tokens(content: str) -> int:
    return len(content) // CHARS_PER_TOKEN


def tally(walk: Walk, env_mismatches: int | None = None) -> EpisodeReplay:
    """The rows of a finished walk."""
    episode = walk.episode
    header = episode.header
    sid, task = header.session_id, header.task_id
    lookup_rows = [_lookup_row(walk, record) for record in walk.lookups]
    used = sum(1 for r in lookup_rows if r.used)
    transient = sum(1 for r in lookup_rows if r.transient)
    row = EpisodeRow(
        session_id=sid, task_id=task, agent=header.agent_model, app=header.app,
        harness=header.harness, trial=header.trial, reward=header.reward,
        llm_turns=len(episode.turns), turns_saved=len(walk.saved_turns),
        calls=sum(1 for c in episode.calls.values() if c.by_agent),
        calls_answered=len(walk.answered), ceiling_turns=episode.ceiling_turns,
        lookups=len(lookup_rows), used=used, detours=len(lookup_rows) - used - transient, transient=transient,
        used_before_next_decision=sum(1 for r in lookup_rows if r.before_next_decision),
        saved_turn_tokens=sum(saved_turn_value(episode, n) for n in walk.saved_turns),
        detour_tokens=float(sum(r.result_tokens * r.turns_left for r in lookup_rows if r.detour)),
        input_tokens=episode.input_tokens, env_mismatches=env_mismatches)
    weighed = [WeighedRow(session_id=sid, task_id=task, decision=c.decision, response=c.response,
                          tool=c.tool, site=c.site, reach=c.reach, next_p=c.next_p, binding=c.binding,
                          score_use=c.reach * c.binding, score_next=c.next_p * c.binding,
                          used=c.used, made=c.made)
               for c in walk.candidates]
    return EpisodeReplay(row, lookup_rows, weighed, list(walk.trace))


def _lookup_row(walk: Walk, record: LookupRecord) -> LookupRow:
    episode = walk.episode
    used = record.claimed is not None
    return LookupRow(
        session_id=episode.session_id, task_id=episode.header.task_id, decision=record.decision,
        response=record.response, tool=record.tool, arguments=record.arguments, site=record.site,
        score=record.score, reach=record.reach, binding=record.binding, used=used,
        detour=not used and not record.transient, transient=record.transient,
        stand_in=record.stand_in, from_stand_in=record.from_stand_in, answered=used and not record.in_flight,
        before_next_decision=used and _before_next_decision(walk, record),
        result_tokens=result_tokens(record.content),
        turns_left=episode.turns_after_event[record.event_index])


def _before_next_decision(walk: Walk, record: LookupRecord) -> bool:
    """Whether the call the lookup matched came before the next tool response the engine saw."""
    assert record.claimed is not None
    if record.in_flight:
        return True
    responses = walk.response_events
    i = bisect_right(responses, record.event_index)
    return i >= len(responses) or record.claimed.issued_at < responses[i]
