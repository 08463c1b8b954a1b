"""Run a procedure with no model: walk the site's tree, bind the leaf's call, make it; at the end,
check the ticket's outcome with a read.

The decisions are pure (`ProcedureRun.next` takes the state, returns the next call or the end);
the drivers make the calls: `run_procedure` against an in-process tool set, `arun_procedure`
against an async one (an MCP client session, see `procedures.mcp`). Verdicts:

- `resolved`: the tree said stop and every check that applies to the ticket passed (at least one
  must apply: an outcome nothing confirms is not called resolved);
- `transferred`: the procedure made its handoff call (the policy directs a person to take it),
  only while it followed its trees' choices: once a write was held back or the fallback made a
  call, a handoff the tree picks becomes a hand-back (escalating is then a model's judgement);
- `hand_back`: a check failed or none applies, no option at a leaf binds, passes the guard and
  meets its precondition (nor, with `fallback`, any write elsewhere whose precondition holds, nor
  the outcome's probe or another probe), there is no tree for the site (no demonstration went on
  from there, as after an error none made: the fallback does not go on either), or the call
  budget ran out. `reason` says
  which, in words.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal, Protocol

from stretto_core.procedures.bindings import bind
from stretto_core.procedures.checks import check_passes
from stretto_core.procedures.conditions import condition_features, unmet
from stretto_core.procedures.ir import STOP, Action, Check, Procedure
from stretto_core.procedures.state import RunState, Step, ticket_words
from stretto_core.procedures.tree import predict

Verdict = Literal["resolved", "transferred", "hand_back"]


class ToolSet(Protocol):
    """Anything that runs a tool call and returns the text the agent would see and an error flag."""

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        ...


@dataclass
class Call:
    """One call the procedure made: why (`tree` or `check`), at which site, and what came back."""

    tool: str
    arguments: dict[str, Any]
    content: str = ""
    error: bool = False
    action: str | None = None
    site: str = ""
    purpose: Literal["tree", "check", "model"] = "tree"


@dataclass
class RunResult:
    """The calls a run made, its verdict, and the reason in words."""

    verdict: Verdict
    reason: str
    calls: list[Call] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)


@dataclass
class _Pending:
    call: Call
    check: Check | None = None


class ProcedureRun:
    """One run's decisions. Call `next()`; make the call it returns; `record()` its result."""

    def __init__(self, procedure: Procedure, ticket: str) -> None:
        self.procedure = procedure
        self.state = RunState(ticket)
        self.calls: list[Call] = []
        self.vocab = set(procedure.vocab)
        self._phase: Literal["tree", "check"] = "tree"
        self._checks: list[Check] = []
        self._check_notes: list[str] = []
        self._pending: _Pending | None = None
        self.result: RunResult | None = None
        self._deviated: str | None = None
        """Why the run left its trees' first choices (a write held back, a fallback call), if it did."""

    def kind(self, tool: str) -> str:
        if tool in self.procedure.reads:
            return "read"
        return "write" if tool in self.procedure.writes else "generic"

    def next(self) -> Call | RunResult:
        """The next call to make, or the run's result when it has ended."""
        if self.result is not None:
            return self.result
        if self._phase == "tree":
            decision = self._next_in_tree()
            if decision is not None:
                return decision
        return self._next_check()

    def record(self, content: str, error: bool) -> None:
        """The result of the call `next()` returned."""
        if self._pending is None:
            raise RuntimeError("record() without a pending call")
        call, check = self._pending.call, self._pending.check
        self._pending = None
        call.content, call.error = content, error
        self.calls.append(call)
        self.state.add(Step.of(call.tool, call.arguments, content, error, self.kind(call.tool), call.action))
        if check is not None:
            self._judge(check, self.state.steps[-1].tokens, error)
        elif call.tool == self.procedure.handoff and not error:
            self._end("transferred", f"made the handoff call {call.tool}")

    def _end(self, verdict: Verdict, reason: str) -> RunResult:
        self.result = RunResult(verdict, reason, self.calls, self._check_notes)
        return self.result

    def _next_in_tree(self) -> Call | RunResult | None:
        tree_calls = sum(1 for c in self.calls if c.purpose == "tree")
        if tree_calls >= self.procedure.max_calls:
            return self._end("hand_back", f"made {tree_calls} calls, the procedure's budget")
        site = self.state.site()
        tree = self.procedure.trees.get(site)
        conditions = condition_features(self.state, self.vocab)
        tried: list[str] = []
        if tree is not None:
            for option in predict(tree.root, self.state.features(self.vocab)):
                if option.action == STOP:
                    failing = self._failing_check() if self.procedure.fallback else None
                    if failing is not None:
                        tried.append(f"stop ({failing})")
                        continue
                    self._phase = "check"
                    self._checks = self._applicable_checks()
                    return None
                action = self.procedure.actions.get(option.action)
                if action is None:
                    tried.append(f"{option.action} (unknown)")
                    continue
                write = self.kind(action.tool) == "write"
                if write and self._made_enough(option.action, action):
                    tried.append(f"{option.action} (made {action.most_per_run}×, as often as any demonstration)")
                    self._deviated = self._deviated or tried[-1]
                    continue
                missing = unmet(action.requires, conditions) if write else []
                arguments = None if missing else self._bind(action)
                if arguments is None:
                    tried.append(f"{option.action} (its state does not hold: {missing[0]})" if missing
                                 else option.action)
                    if missing:
                        self._deviated = self._deviated or tried[-1]
                    continue
                if action.tool == self.procedure.handoff and self._deviated:
                    return self._end("hand_back", f"the tree would hand the ticket to a person, but the run left "
                                                  f"its demonstrations ({self._deviated}): a model should judge")
                return self._propose(Call(action.tool, arguments, action=option.action, site=site))
        if self.procedure.fallback and tree is not None:
            if self._confirmed():
                self._phase = "check"
                self._checks = self._applicable_checks()
                return None
            fallback = self._fallback(site, conditions)
            if fallback is not None:
                return fallback
        if tree is None:
            return self._end("hand_back", f"no tree for site {site!r}: no demonstration went on from there")
        return self._end("hand_back", f"at site {site!r} no option binds or passes the guard: {tried}")

    def _fallback(self, site: str, conditions: set[str]) -> Call | None:
        """Where a leaf has nothing: a write made elsewhere whose precondition holds here and says
        "now" often enough in training (`fallback_precision`), never one this run made already (a
        toggle made twice undoes itself), the most specific first; else the probe that tests the
        ticket's outcome, else one of `probes`. None when nothing may be made: then it hands back."""
        made = {c.action for c in self.calls}
        ranked = sorted(((key, a) for key, a in self.procedure.actions.items()
                         if a.requires and self.kind(a.tool) == "write" and key not in made
                         and (a.precision or 0.0) >= self.procedure.fallback_precision
                         and not unmet(a.requires, conditions)),
                        key=lambda ka: (-len(ka[1].requires), -ka[1].count, ka[0]))
        for key, action in ranked:
            arguments = self._bind(action)
            if arguments is not None:
                self._deviated = self._deviated or f"fallback to {key}"
                return self._propose(Call(action.tool, arguments, action=key, site=f"{site} (fallback)"))
        reads = [c.probe for c in self._applicable_checks()] + list(self.procedure.probes)
        for key in dict.fromkeys(reads):
            action = self.procedure.actions.get(key)
            arguments = self._bind(action) if action is not None else None
            if action is not None and arguments is not None:
                self._deviated = self._deviated or f"fallback to {key}"
                return self._propose(Call(action.tool, arguments, action=key, site=f"{site} (fallback)"))
        return None

    def _made_enough(self, key: str, action: Action) -> bool:
        """The run made this action as often as any demonstration did (a second refuel, a toggle
        undoing itself); no limit when `most_per_run` is 0."""
        return action.most_per_run > 0 and sum(c.action == key for c in self.calls) >= action.most_per_run

    def _confirmed(self) -> bool:
        """Every check the ticket asks for applies and passes on a fresh result of its probe."""
        checks = self._applicable_checks()
        for check in checks:
            fresh = self._fresh_result(check.probe)
            if fresh is None or fresh.error or not check_passes(check, fresh.tokens)[0]:
                return False
        return bool(checks)

    def _failing_check(self) -> str | None:
        """Why an applicable check already fails on a fresh result of its probe (None: none does)."""
        for check in self._applicable_checks():
            fresh = self._fresh_result(check.probe)
            if fresh is not None:
                ok, why = (False, f"{check.probe} failed") if fresh.error else check_passes(check, fresh.tokens)
                if not ok:
                    return why
        return None

    def _bind(self, action: Action) -> dict[str, Any] | None:
        names = sorted(action.arguments)
        values = [bind(action.arguments[n], self.state) for n in names]
        if any(not v for v in values):
            return None
        kind = self.kind(action.tool)
        for combo in itertools.product(*values):
            arguments = dict(zip(names, combo))
            if not self.state.forbidden(action.tool, arguments, kind):
                return arguments
        return None

    def _propose(self, call: Call, check: Check | None = None) -> Call:
        self._pending = _Pending(call, check)
        return call

    def _applicable_checks(self) -> list[Check]:
        words = set(ticket_words(self.state.ticket))
        return [c for c in self.procedure.checks if c.phrase in words]

    def _next_check(self) -> Call | RunResult:
        while self._checks:
            check = self._checks[0]
            fresh = self._fresh_result(check.probe)
            if fresh is not None:
                self._checks.pop(0)
                if not self._judge(check, fresh.tokens, fresh.error):
                    return self.result  # type: ignore[return-value]
                continue
            action = self.procedure.actions.get(check.probe)
            arguments = self._bind_probe(action) if action else None
            if action is None or arguments is None:
                return self._end("hand_back", f"cannot make the probe {check.probe} of check {check.phrase!r}")
            self._checks.pop(0)
            return self._propose(Call(action.tool, arguments, action=check.probe, site=self.state.site(),
                                      purpose="check"), check)
        if self.result is not None:
            return self.result
        if not self._check_notes:
            return self._end("hand_back", "the tree stopped, but no check confirms the outcome this ticket asks for")
        return self._end("resolved", "the tree stopped and " + "; ".join(self._check_notes))

    def _bind_probe(self, action: Action) -> dict[str, Any] | None:
        names = sorted(action.arguments)
        values = [bind(action.arguments[n], self.state) for n in names]
        if any(not v for v in values):
            return None
        return dict(zip(names, (v[0] for v in values)))

    def _fresh_result(self, probe: str) -> Step | None:
        last_write = self.state.last_write_index()
        for i in range(len(self.state.steps) - 1, last_write, -1):
            if self.state.steps[i].action == probe:
                return self.state.steps[i]
        return None

    def _judge(self, check: Check, tokens: list[str], error: bool) -> bool:
        ok, why = (False, f"{check.probe} failed") if error else check_passes(check, tokens)
        self._check_notes.append(why)
        if not ok:
            self._end("hand_back", f"the check of {check.phrase!r} failed: {why}")
        return ok


def run_procedure(procedure: Procedure, ticket: str, tools: ToolSet | Callable[[str, dict[str, Any]], tuple[str, bool]]) -> RunResult:
    """Run against an in-process tool set (an object with `call`, or a function)."""
    call_tool = tools.call if hasattr(tools, "call") else tools
    run = ProcedureRun(procedure, ticket)
    while True:
        decision = run.next()
        if isinstance(decision, RunResult):
            return decision
        try:
            content, error = call_tool(decision.tool, dict(decision.arguments))
        except Exception as exc:  # a tool that raises is an error result, as an MCP server reports it
            content, error = f"Error: {exc}", True
        run.record(content, error)


async def arun_procedure(procedure: Procedure, ticket: str,
                         call_tool: Callable[[str, dict[str, Any]], Awaitable[tuple[str, bool]]]) -> RunResult:
    """Run against an async tool set: `await call_tool(tool, arguments) -> (text, is_error)`."""
    run = ProcedureRun(procedure, ticket)
    while True:
        decision = run.next()
        if isinstance(decision, RunResult):
            return decision
        try:
            content, error = await call_tool(decision.tool, dict(decision.arguments))
        except Exception as exc:
            content, error = f"Error: {exc}", True
        run.record(content, error)
