"""The order of a chain: served by the best score, and, opted into, by the habit's next read first."""

from __future__ import annotations

from dataclasses import dataclass

from stretto_core.serve.chain_order import HabitOrdered, habit_first
from stretto_core.serve.speculator import Guard, Weighed, decide
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.state import ToolState

TOOLS = ToolManifest.declare(reads=["types", "reviews", "prices"])


@dataclass
class _Bound:
    arguments: dict
    rho: float
    sources: list


class _Cars:
    """After a listing: reviews are read at some point (reach 0.9), types next (habit 0.6)."""

    manifest = TOOLS
    reaches = {"types": 0.6, "reviews": 0.9, "prices": 0.2}
    habit = {"types": 0.6, "reviews": 0.1, "prices": 0.05}

    def read_tools(self):
        return list(self.reaches)

    def reach(self, history, tool):
        return self.reaches[tool]

    def next_step(self, history):
        return dict(self.habit)

    def bind(self, tool, state, site):
        return _Bound({"company": ["a", "b"]}, 0.8, [f"{tool} $"])

    def threshold(self, site, default):
        return default


def _guard() -> Guard:
    return Guard(TOOLS, TOOLS)


def test_the_habits_likeliest_of_the_reads_that_clear_theta_goes_first_ties_to_the_larger_score():
    cleared = [Weighed("reviews", {}, 0.72, 0.9, 0.8), Weighed("types", {}, 0.48, 0.6, 0.8),
               Weighed("prices", {}, 0.40, 0.5, 0.8)]
    assert habit_first(cleared, {"types": 0.6, "reviews": 0.1}).tool == "types"
    assert habit_first(cleared, {"types": 0.2, "prices": 0.2}).tool == "types"  # a tie on the habit: the score
    assert habit_first(cleared, {}).tool == "reviews"


def test_the_speculator_serves_the_best_score_first_unless_the_model_opts_into_the_habits_order():
    state = ToolState(TOOLS)
    served = decide(_Cars(), _guard(), state, ["listing/ok/0"], "listing")
    ordered = decide(HabitOrdered(_Cars()), _guard(), state, ["listing/ok/0"], "listing")
    assert served is not None and served.tool == "reviews"
    assert ordered is not None and ordered.tool == "types"
    assert ordered.score < served.score  # the habit's order made a read the score ranks lower


def test_the_habits_order_never_makes_a_read_below_theta():
    model = HabitOrdered(_Cars())
    model.model.reaches = {"types": 0.3, "reviews": 0.9, "prices": 0.2}  # types scores 0.24 < θ
    decision = decide(model, _guard(), ToolState(TOOLS), ["listing/ok/0"], "listing")
    assert decision is not None and decision.tool == "reviews"
