"""The concentration α of the habit and the reach, from its posterior given the counts.

One α is shared by every level of the habit and the reach (paper §2.4). Its prior is

    log α ~ Normal(0, PRIOR_SD = 2),

and its likelihood is the marginal likelihood of the training steps under the habit. At each
context h of each level j, the next actions that followed h are a Dirichlet–multinomial draw
with concentration α and base measure p_{j-1}(· | h_{j-1}), the next-lower level's predictive
(uniform 1/V below level 0). Its marginal likelihood is

    log ML_h(α) = lgamma(α) − lgamma(n_h + α) + Σ_a [lgamma(n_ha + α p_a) − lgamma(α p_a)],

and log ML(α) = Σ_j Σ_h log ML_h(α).

Why this is the prequential likelihood, up to the plug-in base measure. Read the n_h steps that
followed h one at a time, each predicted by the Pólya urn of those before it: the i-th, with
action a after k_a earlier a's among i−1, has probability (k_a + α p_a) / (i − 1 + α). The
product over the n_h steps has numerator Π_a Π_{k<n_ha} (k + α p_a) = Π_a Γ(n_ha + α p_a) /
Γ(α p_a) and denominator Π_{i<n_h} (i + α) = Γ(n_h + α) / Γ(α), which is ML_h(α) above. The
product does not depend on the order of the steps (the urn is exchangeable), so for a fixed base
measure the prequential likelihood of each level is a function of the counts alone. The
prequential reading of the reference implementation differs in two ways: its base measure at
step i is the lower level as learned from the steps before i, where we plug in the lower level
learned from all of them (an empirical-Bayes plug-in, as in MacKay & Peto 1995), and it scores a
step once, at the deepest context seen, where we score it at every level, so that each level's
fit to its shorter context informs α. In exchange, α is a pure function of the counts: flows
merged from parts get the α of a flow learned at once, and the session order cannot change it.
Weighed counts (a power prior) enter with their fractional counts, which is the power-prior
likelihood ML^w to the same first order.

The posterior is evaluated on a fixed grid of log α (GRID_POINTS from LOG_ALPHA_MIN to
LOG_ALPHA_MAX), normalized, and summarized by its median and its 5% and 95% quantiles, read
from the grid's histogram (each point's mass spread evenly over its cell). Only the points
within `alpha_window.WINDOW` nats of the top are evaluated (about a third of the grid: the others'
weights lie below a double's resolution of the sum; `learn/alpha_window.py`). The computation is
deterministic: no sampling. It runs in plain Python (`math.lgamma`), so learning needs no numpy or
scipy: equal terms (the same count under the same base measure, the same context total) are
computed once and added with their multiplicity, which keeps it to a fraction of a second on the
published corpora.

A regular process (each context followed by one action) gives small α: trust the longest
context. Steps that look like their shorter context's (near-uniform data) give large α.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from stretto_core.learn.alpha_window import windowed_log_posterior
from stretto_core.learn.counts import Counts

PRIOR_SD = 2.0
"""The prior's standard deviation of log α, around log α = 0 (α = 1)."""

LOG_ALPHA_MIN = -6.0
"""The grid's smallest log α (α ≈ 0.0025)."""

LOG_ALPHA_MAX = 8.0
"""The grid's largest log α (α ≈ 2,981)."""

GRID_POINTS = 121
"""Points of the log α grid: a step of about 0.117, finer than the posterior's usual width."""

QUANTILES = (0.05, 0.5, 0.95)
"""The posterior summary: 5%, median, 95%."""

Grid = Sequence[float]
"""A grid of log α (or of values over it): a sequence of floats, one per grid point."""


def log_alpha_grid() -> list[float]:
    """The grid of log α the posterior is computed on: GRID_POINTS evenly spaced, ends exact."""
    step = (LOG_ALPHA_MAX - LOG_ALPHA_MIN) / (GRID_POINTS - 1)
    grid = [LOG_ALPHA_MIN + i * step for i in range(GRID_POINTS)]
    grid[-1] = LOG_ALPHA_MAX
    return grid


def __getattr__(name: str) -> Any:
    if name == "LOG_ALPHA_GRID":
        return log_alpha_grid()
    raise AttributeError(name)


class AlphaPosterior(BaseModel):
    """α's posterior summary: `alpha` (the median, the value served), `lower` 5%, `upper` 95%."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    alpha: float
    lower: float
    upper: float
    steps: float = 0.0


def grid_of(log_alphas: Iterable[float] | None) -> list[float]:
    """The grid as plain floats (the default grid when None)."""
    return log_alpha_grid() if log_alphas is None else [float(x) for x in log_alphas]


def alphas_of(log_alphas: Iterable[float] | None, vocab_size: int) -> list[float]:
    """The α values of a grid of log α (the default grid when None), for a vocabulary of at least one action."""
    if vocab_size < 1:
        raise ValueError("the vocabulary needs at least one action")
    return [math.exp(x) for x in grid_of(log_alphas)]


Points = tuple[list[float], list[float]]
"""The grid points a level is computed at: their α, and lgamma(α)."""

Level = TypeVar("Level")

AddLevel = Callable[[Level, Points, list[float], list[list[float]], bool], tuple[list[float], list[list[float]]]]
"""One level's log ML added to `out` at the points, given the lower level's predictive there;
returns the sums and this level's predictive (none for the last level: nothing reads it)."""


def levels_log_ml(alphas: list[float], levels: Sequence[Level], add_level: AddLevel[Level]) -> list[float]:
    """The log ML of every level summed at each α, level after level (each level's terms
    grid-free first, so that the grid loop does arithmetic and lgamma only)."""
    points = (alphas, [math.lgamma(a) for a in alphas])
    out = [0.0] * len(alphas)
    below: list[list[float]] = []
    for depth, level in enumerate(levels):
        out, below = add_level(level, points, out, below, depth == len(levels) - 1)
    return out


HabitLevel = tuple[Counter[float], Counter[tuple[float, int]], dict[tuple[float, int, float], int]]
"""A habit level, grid-free: contexts per total, (count, parent) entries, and the distinct
(count, parent, total) kinds its predictive is kept for."""


def log_marginal_likelihood(counts: Counts, vocab_size: int,
                            log_alphas: Iterable[float] | None = None) -> list[float]:
    """log ML(α) of the habit's counts at each log α of the grid (see the module docstring)."""
    return habit_log_ml_at(counts, vocab_size)(grid_of(log_alphas))


def habit_log_ml_at(counts: Counts, vocab_size: int) -> Callable[[list[float]], list[float]]:
    """log ML(α) of the habit's counts as a function of a list of log α: the counts' grid-free
    terms taken once, however many sub-grids it is then evaluated at."""
    alphas_of([], vocab_size)
    uniform = 1.0 / vocab_size
    levels = _habit_levels(counts)
    return lambda log_alphas: levels_log_ml(alphas_of(log_alphas, vocab_size), levels,
                                            lambda level, points, out, below, last:
                                            _add_habit_level(level, points, out, below, uniform, last))


def _habit_levels(counts: Counts) -> list[HabitLevel]:
    """Each level's distinct totals, entries and kinds, with their multiplicities: grid-free."""
    levels: list[HabitLevel] = []
    prev_index: dict[tuple[tuple[str, ...], str], int] = {}
    for j in range(counts.order + 1):
        level = counts.habit_level(j)
        if not level:
            break
        per_total: Counter[float] = Counter()
        per_entry: Counter[tuple[float, int]] = Counter()
        kinds: dict[tuple[float, int, float], int] = {}
        index: dict[tuple[tuple[str, ...], str], int] = {}
        for ctx in sorted(level):
            total, row = level[ctx]
            per_total[total] += 1
            for action in sorted(row):
                parent = prev_index[(ctx[1:], action)] if levels and levels[-1][2] else -1
                per_entry[(row[action], parent)] += 1
                index[(ctx, action)] = kinds.setdefault((row[action], parent, total), len(kinds))
        levels.append((per_total, per_entry, kinds))
        prev_index = index
    return levels


def _add_habit_level(level: HabitLevel, points: Points, out: list[float], below: list[list[float]],
                     uniform: float, last: bool) -> tuple[list[float], list[list[float]]]:
    """`out` plus one habit level's log ML at `points`, and its predictive there (none when `last`)."""
    per_total, per_entry, kinds = level
    alphas, lg_alphas = points
    lgamma = math.lgamma
    flat = [uniform] * len(alphas)
    for total, times in per_total.items():
        out = [o + times * (lg - lgamma(total + a)) for o, lg, a in zip(out, lg_alphas, alphas)]
    # lgamma(α p) once per parent, however many counts share it
    scaled: dict[int, tuple[list[float], list[float]]] = {}
    for parent in {p for _, p in per_entry}:
        s_of = [a * b for a, b in zip(alphas, below[parent] if parent >= 0 else flat)]
        scaled[parent] = (s_of, [lgamma(s) for s in s_of])
    for (n_a, parent), times in per_entry.items():
        s_of, lg_s = scaled[parent]
        out = [o + times * (lgamma(n_a + s) - ls) for o, s, ls in zip(out, s_of, lg_s)]
    if last:
        return out, []
    pred: list[list[float]] = [[]] * len(kinds)
    for (n_a, parent, total), at in kinds.items():
        base = below[parent] if parent >= 0 else flat
        pred[at] = [(n_a + a * b) / (total + a) for a, b in zip(alphas, base)]
    return out, pred


def log_prior(log_alphas: Iterable[float] | None = None) -> list[float]:
    """log density of log α under Normal(0, PRIOR_SD), up to a constant."""
    return [-0.5 * (x / PRIOR_SD) ** 2 for x in grid_of(log_alphas)]


def normalized(log_post: Sequence[float]) -> list[float]:
    """exp(log_post), scaled to sum to one."""
    top = max(log_post)
    weights = [math.exp(x - top) for x in log_post]
    total = sum(weights)
    return [w / total for w in weights]


def posterior_weights(counts: Counts, vocab_size: int,
                      log_alphas: Iterable[float] | None = None) -> list[float]:
    """The posterior of log α on the grid, normalized to sum to one."""
    return normalized(windowed_log_posterior(with_prior(habit_log_ml_at(counts, vocab_size)), grid_of(log_alphas)))


def with_prior(log_ml_at: Callable[[list[float]], list[float]]) -> Callable[[list[float]], list[float]]:
    """The log posterior (up to a constant) at a list of log α, from the log ML there."""
    return lambda log_alphas: [m + p for m, p in zip(log_ml_at(log_alphas), log_prior(log_alphas))]


def alpha_posterior(counts: Counts, vocab_size: int,
                    log_alphas: Iterable[float] | None = None) -> AlphaPosterior:
    """α's posterior median and 5%/95% quantiles given the counts; the prior alone when empty."""
    grid = grid_of(log_alphas)
    return posterior_summary(grid, posterior_weights(counts, vocab_size, grid), counts.steps())


def posterior_summary(grid: Grid, weights: Grid, steps: float) -> AlphaPosterior:
    """Median and 5%/95% quantiles of a posterior on the log α grid."""
    lower, median, upper = (math.exp(_quantile(grid, weights, q)) for q in QUANTILES)
    return AlphaPosterior(alpha=median, lower=lower, upper=upper, steps=steps)


def _quantile(grid: Grid, weights: Grid, q: float) -> float:
    """The q-quantile of a grid distribution, each point's mass spread evenly over its cell."""
    if len(grid) == 1:
        return float(grid[0])
    edges = [grid[0] - (grid[1] - grid[0]) / 2]
    edges += [(hi + lo) / 2 for lo, hi in zip(grid, grid[1:])]
    edges.append(grid[-1] + (grid[-1] - grid[-2]) / 2)
    cdf = list(accumulate(weights))
    i = min(bisect_left(cdf, q), len(grid) - 1)
    below = cdf[i - 1] if i > 0 else 0.0
    share = (q - below) / weights[i] if weights[i] > 0 else 0.0
    value = edges[i] + min(max(share, 0.0), 1.0) * (edges[i + 1] - edges[i])
    return float(min(max(value, grid[0]), grid[-1]))
