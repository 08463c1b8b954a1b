"""The order of a chain: served in `keep` order, and, measured, by the best score or the habit's next read."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from stretto_core.serve.chain_order import HABIT_ORDER, SCORE_ORDER, Ordered, habit_first, keeping_first
from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.serve.speculator import Guard, Weighed, decide
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, ToolCall, ToolResult
from stretto_core.sessions.state import ToolState

TOOLS = ToolManifest.declare(reads=["types", "reviews", "prices"])


@dataclass
class _Bound:
    arguments: dict
    rho: float
    sources: list


class _Cars:
    """After a listing: reviews are read at some point (reach 0.9), types next (habit 0.6); once
    the reviews are the history's last step the types are seldom listed (reach 0.1), while after
    the types the reviews still are (0.9)."""

    manifest = TOOLS
    reaches = {"types": 0.6, "reviews": 0.9, "prices": 0.2}
    after = {"reviews/ok/0": {"types": 0.1}, "types/ok/0": {"types": 0.2}}
    habit = {"types": 0.6, "reviews": 0.1, "prices": 0.05}
    sources = {"types": ["listing $.name"], "reviews": ["listing $.name"], "prices": ["listing $.name"]}

    def read_tools(self):
        return list(self.reaches)

    def reach(self, history, tool):
        return self.after.get(history[-1], {}).get(tool, self.reaches[tool]) if history else self.reaches[tool]

    def next_step(self, history):
        return dict(self.habit)

    def bind(self, tool, state, site):
        return _Bound({"company": ["a", "b"]}, 0.8, list(self.sources[tool]))

    def threshold(self, site, default):
        return default

    def step_symbol(self, tool, error, content, parsed):
        return f"{tool}/{'err' if error else 'ok'}/0"

    def reply_symbol(self, answered=True):
        return "reply"


def _guard() -> Guard:
    return Guard(TOOLS, TOOLS)


def _decide(model, chained=()):
    return decide(model, _guard(), ToolState(TOOLS), ["listing/ok/0"], "listing", chained=chained)


def test_the_habits_likeliest_of_the_reads_that_clear_theta_goes_first_ties_to_the_larger_score():
    cleared = [Weighed("reviews", {}, 0.72, 0.9, 0.8), Weighed("types", {}, 0.48, 0.6, 0.8),
               Weighed("prices", {}, 0.40, 0.5, 0.8)]
    assert habit_first(cleared, {"types": 0.6, "reviews": 0.1}).tool == "types"
    assert habit_first(cleared, {"types": 0.2, "prices": 0.2}).tool == "types"  # a tie on the habit: the score
    assert habit_first(cleared, {}).tool == "reviews"


def test_served_the_read_that_keeps_the_other_above_theta_goes_first_where_the_best_would_drop_it():
    served = _decide(_Cars())
    by_score = _decide(Ordered(_Cars(), SCORE_ORDER))
    assert by_score is not None and by_score.tool == "reviews"  # the best score: the types would fall to 0.08
    assert served is not None and served.tool == "types"  # types first: the reviews still clear (0.72)
    assert served.score < by_score.score


def test_the_best_score_goes_first_when_it_drops_nothing():
    model = _Cars()
    model.after = {}  # after the reviews the types still clear θ
    decision = _decide(model)
    assert decision is not None and decision.tool == "reviews"


def test_a_read_the_habit_puts_behind_the_best_never_goes_ahead():
    model = _Cars()
    model.habit = {"types": 0.05, "reviews": 0.6}
    decision = _decide(model)
    assert decision is not None and decision.tool == "reviews"


def test_a_tool_this_decisions_chain_already_looked_up_never_goes_ahead():
    decision = _decide(_Cars(), chained={"types"})
    assert decision is not None and decision.tool == "reviews"


def test_a_read_whose_result_another_binding_drew_on_never_goes_ahead():
    model = _Cars()
    model.sources = {**model.sources, "reviews": ["types $.company"]}  # the reviews bound from a types result
    decision = _decide(model)
    assert decision is not None and decision.tool == "reviews"


def test_keeping_first_counts_the_others_each_candidate_keeps():
    a, b, c = (Weighed(t, {}, s, s, 1.0) for t, s in (("a", 0.9), ("b", 0.5), ("c", 0.4)))
    keeps = {("a", "b"): True, ("a", "c"): False, ("b", "a"): True, ("b", "c"): True,
             ("c", "a"): True, ("c", "b"): False}
    habit = {"a": 0.1, "b": 0.3, "c": 0.6}
    assert keeping_first([a, b, c], lambda f, o: keeps[(f.tool, o.tool)], habit).tool == "b"  # keeps 2, a keeps 1
    assert keeping_first([a, b, c], lambda f, o: keeps[(f.tool, o.tool)], habit, chained={"b"}).tool == "a"


def test_the_habits_order_never_makes_a_read_below_theta():
    model = Ordered(_Cars(), HABIT_ORDER)
    model.model.reaches = {"types": 0.3, "reviews": 0.9, "prices": 0.2}  # types scores 0.24 < θ
    decision = decide(model, _guard(), ToolState(TOOLS), ["listing/ok/0"], "listing")
    assert decision is not None and decision.tool == "reviews"


def test_an_unknown_order_is_refused():
    with pytest.raises(ValueError, match="chain order must be one of"):
        Ordered(_Cars(), "random")


def test_the_engine_passes_each_decision_its_chain_and_starts_a_new_one_at_the_agents_next_result():
    engine = Engine(_Cars(), EngineConfig(live_manifest=TOOLS))
    session = engine.session()
    session.observe(LLMTurn(calls=[ToolCall(call_id="c1", tool="listing", arguments={})]))
    session.observe(ToolResult(call_id="c1", tool="listing", content="{}"))
    first = session.decide()
    assert first is not None and first.tool == "types"
    session.add_lookup(first, "{}", False)
    assert session.chain == {"types"}
    session.observe(LLMTurn(calls=[ToolCall(call_id="c2", tool="listing", arguments={})]))
    session.observe(ToolResult(call_id="c2", tool="listing", content="{}"))
    assert session.chain == set()
