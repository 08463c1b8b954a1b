"""Intervals from a bootstrap over tasks: seeded, paired, and a task's rows always drawn together."""

from __future__ import annotations

import numpy as np

from stretto_core.evaluate.measure.bootstrap import (Clusters, Interval, bootstrap, draw_weights, format_interval,
                                            paired_difference, ratio)
from stretto_core.evaluate.measure.metrics import compare_speculators
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from test_measure_rows import shop_sessions
from test_replay_fakes import shop_flow


def test_an_interval_contains_its_point_estimate() -> None:
    rng = np.random.default_rng(3)
    tasks = Clusters.of([f"t{i % 25}" for i in range(200)])
    saved, turns = tasks.sums(rng.integers(0, 4, 200)), tasks.sums(rng.integers(4, 12, 200))
    interval = bootstrap(ratio(saved, turns), tasks.size)
    assert interval.low is not None and interval.high is not None
    assert interval.low <= interval.point <= interval.high
    assert interval.point == saved.sum() / turns.sum()


def test_a_paired_difference_of_identical_replays_is_exactly_zero() -> None:
    replay = replay_sessions(shop_flow(), shop_sessions(12), ReplayOptions(processes=1))
    twin = replay_sessions(shop_flow(), shop_sessions(12), ReplayOptions(processes=1))
    diff = compare_speculators(replay, twin).difference
    for interval in (diff.turns_saved, diff.detours_per_episode, diff.ceiling_share):
        assert (interval.point, interval.low, interval.high) == (0.0, 0.0, 0.0)


def test_a_task_is_drawn_with_all_of_its_rows() -> None:
    # task a: three rows of 1; task b: one row of 0. Drawing whole tasks gives only 1, 3/4 or 0.
    tasks = Clusters.of(["a", "a", "a", "b"])
    values, ones = tasks.sums([1, 1, 1, 0]), tasks.sums([1, 1, 1, 1])
    seen = set(np.round(ratio(values, ones)(draw_weights(tasks.size, 500, 1)), 6))
    assert seen <= {1.0, 0.75, 0.0}


def test_the_same_seed_gives_the_same_interval() -> None:
    tasks = Clusters.of([i % 7 for i in range(40)])
    stat = ratio(tasks.sums(np.arange(40.0)), tasks.sums(np.ones(40)))
    assert bootstrap(stat, tasks.size, seed=5) == bootstrap(stat, tasks.size, seed=5)
    assert bootstrap(stat, tasks.size, seed=5) != bootstrap(stat, tasks.size, seed=6)


def test_a_difference_of_the_same_statistic_on_the_same_draws_is_zero_in_every_draw() -> None:
    tasks = Clusters.of([i % 9 for i in range(50)])
    stat = ratio(tasks.sums(np.arange(50.0) % 4), tasks.sums(np.ones(50)))
    assert paired_difference(stat, stat, tasks.size) == Interval(point=0.0, low=0.0, high=0.0)


def test_no_tasks_give_no_estimate_and_print_as_a_dash() -> None:
    assert bootstrap(lambda w: w.sum(axis=1), 0) == Interval(point=None)
    assert format_interval(Interval(point=None)) == "–"


def test_an_interval_prints_with_its_bounds_and_a_difference_with_its_sign() -> None:
    assert format_interval(Interval(point=0.261, low=0.24, high=0.281), 100, 1, "%") == "26.1% [24.0, 28.1]"
    assert format_interval(Interval(point=0.035, low=0.023, high=0.049), 100, 1, "", True) == "+3.5 [2.3, 4.9]"
