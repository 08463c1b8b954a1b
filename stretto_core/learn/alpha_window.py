"""α's log posterior evaluated only where it has mass: near its peak, not at every grid point.

The posterior of log α is normalized as exp(x − top) over the grid (`alpha.normalized`). A point
more than about 745.13 nats below the top has exp(x − top) == 0.0 exactly in doubles, so it moves
neither the sum nor a quantile: leaving it unevaluated (log posterior −inf, weight 0.0) gives the
same floats, bit for bit (EXACT_WINDOW). A point 60 nats below has a weight below 1e-26 of the
top's, under a double's resolution of their sum, so the default WINDOW leaves those out too (its
note says what that risks, and how it was chosen). Every point's log ML is its own column of the
same sums (nothing is shared across grid points), so a sub-grid evaluated alone gives exactly the
full grid's values there. On τ² retail about 40 of the 121 points are evaluated, not 121.

How the window is found, and the assumption it rests on: the log posterior is taken to have one
peak with tails that fall monotonically away from it (a sum of Dirichlet– or Beta–binomial log
likelihoods and a Normal log prior; every τ² and AgentDojo flow's is). A coarse pass (every
COARSE-th point and the last) finds the top roughly; the nearest coarse point on each side of the
coarse peak that lies below top − window brackets every point above it, and every point inside
the bracket is evaluated. The guard: every coarse point outside the bracket must lie below the
final top − window too; where one does not (a second peak, a tail that rises again), the rest of
the grid is evaluated, so a posterior that breaks the assumption is computed in full, as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

EXACT_WINDOW = 746.0
"""Nats below the top beyond which a point's weight is 0.0 exactly: exp(−746) underflows (the
smallest positive double is exp(−744.4), and exp rounds to 0.0 below −745.13)."""

WINDOW = 60.0
"""Nats below the posterior's top beyond which a point is left unevaluated (the default). Its
weight, < exp(−60) ≈ 9e-27 of the top's, and all 120 such together (< 1.1e-24), lie far below a
double's resolution of the sum (≥ 1, the top's weight: 2.2e-16), so the normalized weights and
quantiles keep their floats unless a rounding falls within that of a tie. Chosen on the τ² train
splits (`benchmarks/alpha_window_same.py`: every refresh of retail, airline and telecom train
staged one session at a time, 682 posteriors): at 60, 50 and 40 nats every α and quantile equals
the full grid's bit for bit, at 30 one differs, at 20 105; 60 keeps the widest margin for 1–2
points more of 121 evaluated (about 40, against 83–110 at EXACT_WINDOW)."""

COARSE = 8
"""The coarse pass takes every COARSE-th grid point (and the last): 16 of the 121."""

LogPosteriorAt = Callable[[list[float]], list[float]]
"""The log posterior at each of a list of log α (each point computed alone: the same float at a
point whatever else is in the list)."""


def windowed_log_posterior(at: LogPosteriorAt, grid: Sequence[float], window: float = WINDOW) -> list[float]:
    """The log posterior at every grid point, −inf where it lies more than `window` below the top
    and was not evaluated (module docstring: the single-peak assumption and its guard)."""
    n = len(grid)
    coarse = sorted(set(range(0, n, COARSE)) | {n - 1})
    if 2 * len(coarse) >= n:
        return at(list(grid))
    values = _evaluate(at, grid, coarse, {})
    top = max(values.values())
    if not math.isfinite(top):
        return _evaluate_all(at, grid, values)
    peak = coarse[[values[i] for i in coarse].index(top)]
    cut = top - window
    lo = max((i for i in coarse if i < peak and values[i] < cut), default=-1)
    hi = min((i for i in coarse if i > peak and values[i] < cut), default=n)
    values = _evaluate(at, grid, [i for i in range(lo + 1, hi) if i not in values], values)
    cut = max(values.values()) - window
    if any(values[i] >= cut for i in coarse if not lo < i < hi):
        return _evaluate_all(at, grid, values)
    return [values.get(i, -math.inf) for i in range(n)]


def _evaluate(at: LogPosteriorAt, grid: Sequence[float], points: list[int], values: dict[int, float]) -> dict[int, float]:
    """`values` with the log posterior at grid points `points` added (one call for all of them)."""
    if points:
        values.update(zip(points, at([grid[i] for i in points])))
    return values


def _evaluate_all(at: LogPosteriorAt, grid: Sequence[float], values: dict[int, float]) -> list[float]:
    """The log posterior at every grid point: the ones not evaluated yet, evaluated."""
    values = _evaluate(at, grid, [i for i in range(len(grid)) if i not in values], values)
    return [values[i] for i in range(len(grid))]
