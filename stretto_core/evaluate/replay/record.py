"""Replay from the record: every result comes from the recorded episode (paper §3, Appendix D).

A benchmark that publishes its agents' runs with every call's result is a test set with no
environment to run. The agent's calls return what they returned. A lookup returns the result of
the agent's own later identical call, if one comes before the agent's next write, and that call
is then answered: exact. Any other lookup is a detour and gets a stand-in, marked so that it
never counts as a saving: the nearest recorded result of the same call (the agent made it across
a write), else of the same tool, else `{}`.

- Writes by others (telecom's customer on their phone) do not end a lookup's reach: the record
  cannot say whether they changed what the agent reads.
- A lookup of a call the agent had already made in the same turn (its result still to come)
  cannot spare it; it gets that call's result and counts as used, not as a detour.
- The agent's own repeats are never savings: only a lookup answers a call.
- A call whose recorded result is a transient failure (`sessions.failures`: `Error: 503`, a
  timeout, or an error the agent's retry did not meet again) is never answered: a lookup that
  matches it gets that result, answers nothing, and is reported apart (`transient`), neither
  used nor a detour.

A stand-in is another call's result, so a later lookup may bind a value from it that the real
result would not have held, and then answer a call by luck. `strict=True` rules that out: a
lookup that took an argument value from a stand-in of another call (the newest result holding
the value) is a detour too. It is off by default, as in the paper: on τ²-bench it makes a record
replay save less than an environment replay in every episode, but it also drops lookups whose
value the real result held as well (most of those it drops). In AgentDojo's environments it is
right once and wrong once (travel: one stand-in-bound save the environment does not make, one it
does; `benchmarks/variant_env.py`, docs/speculator.md).

So each saving is a call the agent really made, answered with the result it really got, and
detours are a lower bound (a stand-in starts fewer chains of lookups than a real result would).
"""

from __future__ import annotations

from dataclasses import dataclass

from stretto_core.evaluate.replay.episode import CallInfo
from stretto_core.evaluate.replay.walk import LookupRecord, Walk
from stretto_core.sessions.model import LLMTurn, ToolResult
from stretto_core.serve.speculator import Decision


@dataclass(frozen=True)
class RecordSource:
    """Answers every call and lookup from the record; lookups are matched when they are made."""

    strict: bool = False

    def answered_in_turn(self, walk: Walk, event_index: int, turn: LLMTurn) -> set[str]:
        return {c.call_id for c in turn.calls if c.call_id in walk.answered}

    def user_result(self, walk: Walk, call: CallInfo | None, result: ToolResult) -> ToolResult:
        return result

    def agent_result(self, walk: Walk, call: CallInfo | None, result: ToolResult,
                     answered: bool) -> ToolResult:
        return result

    def make_lookup(self, walk: Walk, decision: Decision, event_index: int,
                    record: LookupRecord) -> None:
        episode = walk.episode
        record.from_stand_in = self.strict and walk.from_stand_in(decision.arguments)
        call = None if record.from_stand_in else walk.unclaimed_reachable(record.key, event_index)
        if call is None:
            record.content, record.error, same_call = episode.stand_in(decision.tool, record.key, event_index)
            record.stand_in = True
            record.stand_in_of_same_call = same_call
            return
        result = episode.result_of(call)
        record.content, record.error = result.content, result.error
        if call.transient:  # what that call met was the moment's failure: not an answer
            record.transient = True
            return
        walk.claim(record, call, in_flight=call.issued_at < event_index)
