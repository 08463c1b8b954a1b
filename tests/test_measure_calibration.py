"""Calibration of the two scores against use before the next write: ECE, Brier, AUC, and intervals."""

from __future__ import annotations

import pytest

from stretto_core.errors import StrettoError
from stretto_core.evaluate.measure.calibration import auc, brier, calibrate, calibrate_by_app, ece, reliability
from stretto_core.evaluate.replay.rows import ReplayConfig, ReplayResult
from test_measure_rows import weighed

SCORES = [0.1, 0.4, 0.35, 0.8]
USED = [False, False, True, True]


def test_ece_weighs_each_bins_gap_between_mean_score_and_share_used_by_its_lookups() -> None:
    # bins 1, 4, 3 and 8 hold one lookup each: gaps 0.1, 0.4, 0.65 and 0.2
    assert ece(SCORES, USED) == pytest.approx((0.1 + 0.4 + 0.65 + 0.2) / 4)
    # one bin, mean score 0.25, used one time in four: calibrated
    assert ece([0.21, 0.29, 0.21, 0.29], [True, False, False, False]) == pytest.approx(0.0)


def test_brier_is_the_mean_squared_gap_between_score_and_outcome() -> None:
    assert brier(SCORES, USED) == pytest.approx((0.01 + 0.16 + 0.4225 + 0.04) / 4)


def test_auc_is_the_chance_that_a_used_lookup_outscores_an_unused_one_with_ties_one_half() -> None:
    assert auc(SCORES, USED) == pytest.approx(0.75)
    assert auc([0.5, 0.5], [True, False]) == pytest.approx(0.5)
    assert auc([0.2, 0.9], [True, True]) is None


def test_a_score_of_one_falls_in_the_last_bin() -> None:
    bins = reliability([1.0, 0.95], [True, True])
    assert bins[-1].lookups == 2 and bins[-1].share_used == 1.0


def test_a_score_that_is_not_a_probability_is_a_clear_error() -> None:
    with pytest.raises(StrettoError, match="between 0 and 1"):
        ece([1.2], [True])
    with pytest.raises(StrettoError, match="2 scores for 1 outcomes"):
        brier([0.1, 0.2], [True])


def test_each_score_is_judged_over_its_own_replays_lookups_with_a_paired_interval() -> None:
    used_often = [weighed(f"t{i % 10}", 0.1, 0.9, True) for i in range(40)]
    row = calibrate(used_often, used_often, draws=200)
    assert row.ece_next.point == pytest.approx(0.9) and row.ece_use.point == pytest.approx(0.1)
    assert row.ece_difference.point == pytest.approx(-0.8)
    assert row.ece_difference.high < 0
    assert (row.lookups_next, row.lookups_use, row.tasks) == (40, 40, 10)


def test_identical_scores_differ_by_exactly_zero() -> None:
    rows = [weighed(f"t{i % 6}", i / 30, i / 30, i % 3 == 0) for i in range(30)]
    row = calibrate(rows, rows, draws=100)
    for name in ("ece", "brier", "auc"):
        d = getattr(row, f"{name}_difference")
        assert (d.point, d.low, d.high) == (0.0, 0.0, 0.0)


def test_replays_given_in_the_wrong_order_are_refused_by_name() -> None:
    rows = [weighed("t1", 0.2, 0.3, True)]
    use = ReplayResult(config=ReplayConfig(policy="use", weigh=True), weighed_rows=rows)
    nxt = ReplayResult(config=ReplayConfig(policy="next", weigh=True), weighed_rows=rows)
    with pytest.raises(StrettoError, match="next-step replay first"):
        calibrate_by_app(use, nxt)
    with pytest.raises(StrettoError, match="--weigh"):
        calibrate_by_app(nxt.model_copy(update={"weighed_rows": []}), use)
