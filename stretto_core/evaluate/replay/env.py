"""Environment replay: every call and every lookup really runs in the benchmark's environment.

The record can only hand a lookup a recorded result; an environment returns what the lookup
really gets then (paper §2.2, §4.2, Appendix D). Each episode runs on a fresh environment
(`envs.open_environment`), and every recorded call runs in it in the recorded order, the user's
with requestor "user", so the state stays the record's. A lookup runs when it is made.

A lookup answers a later call of the agent's when it is the same call and returned what that
call returns when it runs, unless that is a transient failure (`sessions.failures`, rule 1): then
the lookup answers nothing and is reported apart (`transient`). Writes do not clear lookups here: a read can answer across a write
that left its result unchanged. An answered call still runs, to keep the state right, but the
engine never sees it. A lookup that answers nothing is a detour.

Whether a turn's call is answered must be known before the engine sees the turn, so a call that
lookups may answer is run ahead: at once when only reads run before it (reads commute), else on
a copy of the environment that first runs the writes before it.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from stretto_core.evaluate.envs import ToolEnvironment, open_environment
from stretto_core.evaluate.replay.episode import CallInfo, PreparedEpisode
from stretto_core.evaluate.replay.walk import LookupRecord, Walk
from stretto_core.sessions.failures import is_transient_failure
from stretto_core.sessions.model import LLMTurn, SessionHeader, ToolResult
from stretto_core.serve.speculator import Decision

log = logging.getLogger("stretto.replay")

Outcome = tuple[str, bool]
OpenEnvironment = Callable[[SessionHeader], ToolEnvironment]


def run_call(env: ToolEnvironment, tool: str, arguments: dict[str, Any], requestor: str = "agent") -> Outcome:
    """One call in the environment; an exception is the call's error, never the replay's."""
    try:
        content, error = env.call(tool, arguments, requestor)
    except Exception as exc:  # noqa: BLE001 - a tool that raises returns an error, as live
        return f"Error: {exc}", True
    return content, bool(error)


@dataclass
class EnvSource:
    """Runs every call and lookup in one episode's environment."""

    episode: PreparedEpisode
    env: ToolEnvironment
    ahead: dict[str, Outcome] = field(default_factory=dict)
    """Results of calls run ahead of their turn in the record, by call id."""
    mismatches: int = 0
    """Recorded calls whose result here differs from the record's (exact text or error flag)."""
    copies: int = 0
    unresolved: int = 0

    @classmethod
    def open(cls, episode: PreparedEpisode,
             open_env: OpenEnvironment = open_environment) -> "EnvSource":
        return cls(episode, open_env(episode.header))

    # -- the source protocol ------------------------------------------------------------
    def answered_in_turn(self, walk: Walk, event_index: int, turn: LLMTurn) -> set[str]:
        answered: set[str] = set()
        for tool_call in turn.calls:
            call = self.episode.calls.get(tool_call.call_id)
            if call is None or not call.by_agent or not call.is_read or call.result_index is None:
                continue
            waiting = [r for r in walk.lookups if r.claimed is None and not r.transient and r.key == call.key]
            if not waiting:
                continue
            outcome = self._ahead(call, event_index)
            if outcome is None:
                continue
            same = [r for r in waiting if (r.content, r.error) == outcome]
            if same and is_transient_failure(*outcome):
                same[-1].transient = True  # both met the moment's failure: no answer
            elif same:
                walk.claim(same[-1], call, in_flight=False)  # the latest: the likeliest to match again
                answered.add(call.call_id)
        return answered

    def user_result(self, walk: Walk, call: CallInfo | None, result: ToolResult) -> ToolResult:
        if call is None:
            return result
        return self._seen(result, self._run(call, "user", result))

    def agent_result(self, walk: Walk, call: CallInfo | None, result: ToolResult,
                     answered: bool) -> ToolResult:
        if call is None:
            return result  # a result the record pairs with no call: nothing to run
        outcome = self._run(call, "agent", result)
        if not answered and call.is_read:
            self._claim_in_flight(walk, call, outcome)
        return self._seen(result, outcome)

    def make_lookup(self, walk: Walk, decision: Decision, event_index: int,
                    record: LookupRecord) -> None:
        record.content, record.error = run_call(self.env, decision.tool, decision.arguments)

    # -- running calls --------------------------------------------------------------------
    def _run(self, call: CallInfo, requestor: str, recorded: ToolResult) -> Outcome:
        outcome = self.ahead.pop(call.call_id, None)
        if outcome is None:
            outcome = run_call(self.env, call.tool, call.arguments, requestor)
        if outcome != (recorded.content, recorded.error):
            self.mismatches += 1
        return outcome

    def _ahead(self, call: CallInfo, event_index: int) -> Outcome | None:
        """The call's result when it runs, known now; None when it cannot be known."""
        if call.call_id in self.ahead:
            return self.ahead[call.call_id]
        before = self._runs_between(event_index, call)
        if not any(c.ends_reach for c in before):  # reads and pure tools commute with the call
            outcome = run_call(self.env, call.tool, call.arguments)
        else:
            outcome = self._on_a_copy(before, call)
            if outcome is None:
                return None
        self.ahead[call.call_id] = outcome
        return outcome

    def _runs_between(self, event_index: int, call: CallInfo) -> list[CallInfo]:
        """The recorded calls that run after `event_index` and before `call`, in order."""
        assert call.result_index is not None
        out = [c for c in self.episode.calls.values()
               if c.result_index is not None and event_index < c.result_index < call.result_index
               and c.call_id not in self.ahead]
        return sorted(out, key=lambda c: c.done_at)

    def _on_a_copy(self, before: list[CallInfo], call: CallInfo) -> Outcome | None:
        try:
            twin = copy.deepcopy(self.env)
        except Exception as exc:  # noqa: BLE001 - an environment that cannot be copied
            self.unresolved += 1
            log.warning("session %s: cannot copy the environment to run %s ahead (%s); "
                        "the call is taken as not answered", self.episode.session_id, call.tool, exc)
            return None
        self.copies += 1
        for c in before:
            run_call(twin, c.tool, c.arguments, "agent" if c.by_agent else "user")
        return run_call(twin, call.tool, call.arguments)

    def _claim_in_flight(self, walk: Walk, call: CallInfo, outcome: Outcome) -> None:
        """A lookup made while this call was in flight, of the same call with the same result,
        is used (it cannot spare the call, which the agent had already made)."""
        for record in walk.lookups:
            if (record.claimed is None and not record.transient and record.key == call.key
                    and record.event_index > call.issued_at and (record.content, record.error) == outcome):
                if is_transient_failure(*outcome):
                    record.transient = True
                else:
                    walk.claim(record, call, in_flight=True)
                return

    @staticmethod
    def _seen(recorded: ToolResult, outcome: Outcome) -> ToolResult:
        content, error = outcome
        if content == recorded.content and error == recorded.error:
            return recorded
        return recorded.model_copy(update={"content": content, "error": error, "parsed": None})
