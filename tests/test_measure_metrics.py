"""Table 3's figures from episode rows: ratios of sums, priced at counted or published costs."""

from __future__ import annotations

import pytest

from stretto_core.evaluate.measure.costs import AppCosts
from stretto_core.evaluate.measure.metrics import PAPER_COSTS, compare_speculators, costs_for, measure
from stretto_core.evaluate.replay.rows import ReplayConfig, ReplayResult
from test_measure_rows import episode_row


def replay(*rows, policy: str = "use") -> ReplayResult:
    return ReplayResult(config=ReplayConfig(policy=policy), episode_rows=list(rows)).totals_from_rows()


def counted(beta: float | None, delta: float | None) -> AppCosts:
    return AppCosts(app="tau2/retail", episodes=4, episodes_with_tokens=2, ceiling_turns=3, detours=2,
                    beta=beta, delta=delta, theta_star=None)


def test_turns_saved_detours_and_share_of_ceiling_are_ratios_of_sums_over_episodes() -> None:
    rows = [episode_row("a1", "a", 10, 2, 1, 4), episode_row("a2", "a", 10, 3, 0, 4), episode_row("b1", "b", 20, 1, 3, 2)]
    m = measure(replay(*rows), draws=50)
    assert m.turns_saved.point == pytest.approx(6 / 40)
    assert m.detours_per_episode.point == pytest.approx(4 / 3)
    assert m.ceiling_share.point == pytest.approx(6 / 10)
    assert m.utility is None


def test_utility_per_episode_is_beta_times_saved_less_delta_times_detours() -> None:
    costs = costs_for("tau2/retail", counted(6000.0, 2000.0))
    rows = [episode_row("a1", "a", 10, 2, 1, 4), episode_row("b1", "b", 10, 0, 3, 2)]
    m = measure(replay(*rows), costs, draws=50)
    assert m.utility is not None
    assert m.utility.point == pytest.approx((6000 * 2 - 2000 * 4) / 2)


def test_costs_are_counted_when_both_could_be_counted_else_the_papers_for_the_domain() -> None:
    assert costs_for("tau2/retail", counted(6000.0, 2000.0)).source == "counted"
    fallback = costs_for("tau2/retail", counted(None, 2000.0))
    assert (fallback.source, fallback.beta, fallback.delta) == ("paper", *PAPER_COSTS["retail"])
    assert "paper" in fallback.note and "no episode reports input tokens" in fallback.note
    assert costs_for("tau2/airline", None).beta == PAPER_COSTS["airline"][0]
    assert costs_for("agentdojo/slack", None) is None


def test_two_speculators_are_compared_only_on_the_tasks_both_replayed() -> None:
    a = replay(episode_row("a1", "a", 10, 1, 0, 4), episode_row("c1", "c", 10, 9, 0, 9), policy="next")
    b = replay(episode_row("a1", "a", 10, 3, 1, 4), episode_row("b1", "b", 10, 0, 0, 1))
    c = compare_speculators(a, b, draws=50)
    assert c.tasks == 1
    assert (c.a.episodes, c.b.episodes) == (1, 1)
    assert c.difference.turns_saved.point == pytest.approx(0.2)
    assert c.difference.detours == 1
