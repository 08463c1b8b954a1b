"""The threshold sweep: fewer lookups at every higher threshold, priced at the domain's costs."""

from __future__ import annotations

import pytest

from stretto_core.evaluate.measure.metrics import given_costs
from stretto_core.evaluate.measure.sweep import THETAS, best_theta, render_sweep, sweep, sweep_rows
from stretto_core.evaluate.replay.run import ReplayOptions
from test_measure_rows import shop_sessions
from test_replay_fakes import shop_flow


def swept():
    flow = shop_flow(get_user={"get_order": 0.45, "cancel_order": 0.55})  # next step: get_order 0.45
    return sweep([(flow, shop_sessions(12))], THETAS, options=ReplayOptions(processes=1))


def test_the_sweep_makes_no_more_lookups_at_a_higher_threshold() -> None:
    for policy, by_theta in swept().items():
        lookups = [by_theta[t].lookups for t in sorted(by_theta)]
        assert lookups == sorted(lookups, reverse=True), policy
        assert lookups[0] > lookups[-1], policy


def test_each_row_prices_its_turns_saved_and_detours_at_the_costs_given() -> None:
    rows = sweep_rows("shop", swept(), given_costs(6000.0, 2000.0))
    assert len(rows) == 2 * len(THETAS)
    for row in rows:
        assert row.utility == pytest.approx((6000 * row.saved - 2000 * row.detours) / row.episodes)
    assert best_theta(rows, "use") in THETAS
    assert "Use before write" in render_sweep(rows)


def test_without_costs_there_is_no_utility_and_no_best_threshold() -> None:
    rows = sweep_rows("shop", swept(), None)
    assert all(r.utility is None for r in rows)
    assert best_theta(rows, "use") is None
