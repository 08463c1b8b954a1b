"""α's posterior evaluated near its peak only: the same α as the full grid's, at a fraction of the points."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from stretto_core.flow.ir import load_flow
from stretto_core.learn import alpha_window
from stretto_core.learn.alpha import (alpha_posterior, grid_of, habit_log_ml_at, normalized, posterior_summary,
                                      with_prior)
from stretto_core.learn.alpha_window import EXACT_WINDOW, windowed_log_posterior
from stretto_core.learn.counts import Counts
from stretto_core.learn.reach_alpha import reach_alpha_posterior, reach_log_ml_at

RETAIL = Path(__file__).parent / "fixtures" / "flows" / "tau2-retail.flow.json"


def _counts(sessions: list[list[str]]) -> Counts:
    return Counts.learn((([f"{a}/ok/0" for a in s], s) for s in sessions), lambda a: a.startswith("w"))


def _random_counts(seed: int, sessions: int) -> Counts:
    rng = random.Random(seed)
    return _counts([[rng.choice("aabcdw") for _ in range(rng.randint(1, 12))] for _ in range(sessions)])


def _retail() -> tuple[Counts, int]:
    flow = load_flow(RETAIL)
    return Counts.from_model(flow.counts), len(flow.vocab)


def _weighed_counts() -> Counts:
    """Counts of fractional weight (a power prior's), beside whole ones."""
    counts = _random_counts(3, 40)
    rng = random.Random(4)
    for _ in range(60):
        steps = [rng.choice("abbcw") for _ in range(rng.randint(1, 9))]
        counts.add([f"{a}/ok/0" for a in steps], steps, lambda a: a.startswith("w"), 0.3)
    return counts


FLOWS = {"empty": lambda: (Counts(), 4), "tiny": lambda: (_counts([["a", "b"]]), 3),
         "random": lambda: (_random_counts(7, 300), 6), "weighed": lambda: (_weighed_counts(), 6),
         "retail": _retail}


def _full(log_ml_at, counts: Counts):
    """The posterior summary read from every grid point, as before the window."""
    grid = grid_of(None)
    return posterior_summary(grid, normalized(with_prior(log_ml_at)(grid)), counts.steps())


@pytest.mark.parametrize("name", sorted(FLOWS))
def test_the_windowed_posteriors_equal_the_full_grids_bit_for_bit(name):
    counts, vocab = FLOWS[name]()
    assert alpha_posterior(counts, vocab) == _full(habit_log_ml_at(counts, vocab), counts)
    assert reach_alpha_posterior(counts, vocab) == _full(reach_log_ml_at(counts, vocab), counts)


def _asking(values: list[float], asked: list[int]):
    """A log posterior read from `values` at the default grid's points, noting the points asked."""
    grid = grid_of(None)
    def at(log_alphas: list[float]) -> list[float]:
        asked.extend(grid.index(x) for x in log_alphas)
        return [values[grid.index(x)] for x in log_alphas]
    return at


def test_a_peaked_posterior_is_evaluated_near_its_peak_only():
    counts, vocab = _retail()
    full = with_prior(reach_log_ml_at(counts, vocab))(grid_of(None))
    asked: list[int] = []
    got = windowed_log_posterior(_asking(full, asked), grid_of(None))
    assert len(asked) < 60 and len(set(asked)) == len(asked)  # each point evaluated once, under half of them
    assert [g for g in got if g != -math.inf] == [full[i] for i in sorted(asked)]
    assert normalized(got) != normalized(full)  # the points left out had weights, tiny ones


def test_at_the_exact_window_every_weight_left_out_was_zero_already():
    counts, vocab = _retail()
    full = with_prior(habit_log_ml_at(counts, vocab))(grid_of(None))
    asked: list[int] = []
    got = windowed_log_posterior(_asking(full, asked), grid_of(None), EXACT_WINDOW)
    assert len(asked) < 121
    assert normalized(got) == normalized(full)


def _two_peaks(x: float) -> float:
    """A log posterior with a second peak, 40 nats below the first, far out in the tail."""
    return max(-20.0 * (x - 1.0) ** 2, -40.0 - 20.0 * (x - 6.5) ** 2)


def test_a_second_peak_seen_by_the_coarse_pass_sends_the_posterior_to_the_full_grid(monkeypatch):
    grid = grid_of(None)
    full = [_two_peaks(x) for x in grid]
    fell_back: list[bool] = []
    evaluate_all = alpha_window._evaluate_all
    monkeypatch.setattr(alpha_window, "_evaluate_all", lambda *a: fell_back.append(True) or evaluate_all(*a))
    asked: list[int] = []
    got = windowed_log_posterior(_asking(full, asked), grid)
    assert fell_back == [True]
    assert got == full and sorted(asked) == list(range(121))


def test_one_peak_with_the_same_tails_is_not_sent_to_the_full_grid():
    grid = grid_of(None)
    full = [-20.0 * (x - 1.0) ** 2 for x in grid]
    asked: list[int] = []
    got = windowed_log_posterior(_asking(full, asked), grid)
    assert len(asked) < 60 and got.count(-math.inf) == 121 - len(asked)


def test_a_grid_of_a_few_points_is_evaluated_whole():
    asked: list[int] = []
    grid = [0.0, 1.0, 2.0]
    assert windowed_log_posterior(lambda xs: asked.extend(xs) or [-1000.0 * x for x in xs], grid) == [0.0, -1000.0, -2000.0]
    assert asked == grid
