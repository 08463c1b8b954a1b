"""The reach's own concentration: α for r(t | h), from the reach's counts, not the habit's.

The reach backs off as the habit does (paper §2.4),

    r_j(t | h_j) = (m(h_j, t) + α r_{j-1}(t | h_{j-1})) / (n(h_j) + α),     r_{-1} = 1/V,

but its event is another one: "t is called before the next write", a Bernoulli per tool and
step, where the habit's is "the next step is t", one categorical draw per step. The α that fits
the next step (`learn/alpha.py`) is not the one that fits the reach: in τ² retail and airline and
every AgentDojo suite the reach's is smaller (retail 2.3 against the habit's 4.4, AgentDojo
banking 4.8 against 6.3), so served at the habit's α the reach leans on the shorter context more
than its own counts say, and spreads a tool's use over contexts that do not lead to it.

So the reach gets its own α, with the same prior and grid, and the likelihood of its own counts:
at each context h of each level j, for each action t, the m(h, t) steps followed by t before a
write among the n(h) steps after h are a Beta–Binomial draw with mean r_{j-1}(t | h_{j-1}) and
concentration α,

    log ML_{h,t}(α) = lgamma(α) − lgamma(n + α) + lgamma(m + α r) − lgamma(α r)
                      + lgamma(n − m + α (1 − r)) − lgamma(α (1 − r)),

summed over levels, contexts and the actions seen in training, with the lower level's
predictive plugged in as its mean (as the habit's likelihood does). Steps of one session are
counted as if independent, as the habit's are. Rows of the same (n, m, mean) are computed once and
added with their multiplicity, in plain Python (`math.lgamma`), as the habit's are.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable

from stretto_core.learn.alpha import (AlphaPosterior, Points, alphas_of, grid_of, normalized, levels_log_ml,
                                      posterior_summary, with_prior)
from stretto_core.learn.alpha_window import windowed_log_posterior
from stretto_core.learn.counts import Counts

EDGE = 1e-12
"""A back-off mean is kept this far inside (0, 1), where the Beta–Binomial is defined."""


Rows = dict[tuple[float, float, int], int]
"""A level's distinct rows (n, m, parent's row at the level below, or -1) → their position."""


def reach_log_marginal_likelihood(counts: Counts, vocab_size: int,
                                  log_alphas: Iterable[float] | None = None) -> list[float]:
    """log ML(α) of the reach's counts at each log α of the grid (module docstring)."""
    return reach_log_ml_at(counts, vocab_size)(grid_of(log_alphas))


def reach_log_ml_at(counts: Counts, vocab_size: int) -> Callable[[list[float]], list[float]]:
    """log ML(α) of the reach's counts as a function of a list of log α: the counts' grid-free
    rows taken once, however many sub-grids it is then evaluated at."""
    alphas_of([], vocab_size)
    uniform = min(max(1.0 / vocab_size, EDGE), 1.0 - EDGE)
    levels = _levels(counts)
    return lambda log_alphas: levels_log_ml(alphas_of(log_alphas, vocab_size), levels,
                                            lambda level, points, out, below, last:
                                            _add_level(level, points, out, below, uniform, last))


def _levels(counts: Counts) -> list[tuple[Rows, Counter[int]]]:
    """Each level's distinct rows and how many (context, action) pairs share each: grid-free."""
    actions = sorted(counts.actions())
    levels: list[tuple[Rows, Counter[int]]] = []
    if not actions:
        return levels
    prev_index: dict[tuple[tuple[str, ...], str], int] = {}
    for j in range(counts.order + 1):
        habit = counts.habit_level(j)
        if not habit:
            break
        reach = counts.reach_level(j)
        rows: Rows = {}
        times: Counter[int] = Counter()
        index: dict[tuple[tuple[str, ...], str], int] = {}
        for ctx in sorted(habit):
            total = habit[ctx][0]
            row = reach.get(ctx, {})
            for action in actions:
                parent = prev_index.get((ctx[1:], action), -1) if levels else -1
                at = rows.setdefault((total, min(row.get(action, 0.0), total), parent), len(rows))
                times[at] += 1
                index[(ctx, action)] = at
        levels.append((rows, times))
        prev_index = index
    return levels


def _add_level(level: tuple[Rows, Counter[int]], points: Points, out: list[float], below: list[list[float]],
               uniform: float, last: bool) -> tuple[list[float], list[list[float]]]:
    """`out` plus one level's log ML at `points`, and the level's predictive there (none when `last`)."""
    rows, times = level
    alphas, lg_alphas = points
    lgamma = math.lgamma
    # what depends on the mean alone is computed once per parent, on n alone once per n; a row
    # with m = 0 (or m = n) reuses its parent's lgamma(α r) (or lgamma(α (1 − r))): 0 + x is x
    owners: dict[int, tuple[list[float], list[float], list[float], list[float], list[float]]] = {}
    for parent in {p for _, _, p in rows}:
        means = ([min(max(x, EDGE), 1.0 - EDGE) for x in below[parent]] if parent >= 0
                 else [uniform] * len(alphas))
        a_of = [al * mu for al, mu in zip(alphas, means)]
        b_of = [al * (1.0 - mu) for al, mu in zip(alphas, means)]
        lg_a = [lgamma(a) for a in a_of]
        lg_b = [lgamma(b) for b in b_of]
        owners[parent] = (a_of, b_of, [lg - la - lb for lg, la, lb in zip(lg_alphas, lg_a, lg_b)], lg_a, lg_b)
    per_total = {n: [lgamma(n + al) for al in alphas] for n in {n for n, _, _ in rows}}
    pred: list[list[float]] = [] if last else [[]] * len(rows)
    for (n, m, parent), at in rows.items():
        a_of, b_of, fixed, lg_a, lg_b = owners[parent]
        lg_n, k = per_total[n], times[at]
        if m == 0:
            out = [o + k * (f - ln + la + lgamma(n + b)) for o, f, ln, la, b in zip(out, fixed, lg_n, lg_a, b_of)]
        elif m == n:
            out = [o + k * (f - ln + lgamma(m + a) + lb) for o, f, ln, a, lb in zip(out, fixed, lg_n, a_of, lg_b)]
        else:
            out = [o + k * (f - ln + lgamma(m + a) + lgamma(n - m + b))
                   for o, f, ln, a, b in zip(out, fixed, lg_n, a_of, b_of)]
        if not last:
            pred[at] = [(m + a) / (n + al) for a, al in zip(a_of, alphas)]
    return out, pred


def reach_alpha_posterior(counts: Counts, vocab_size: int,
                          log_alphas: Iterable[float] | None = None) -> AlphaPosterior:
    """The reach's α: posterior median and 5%/95% quantiles (the prior alone when empty)."""
    grid = grid_of(log_alphas)
    log_post = windowed_log_posterior(with_prior(reach_log_ml_at(counts, vocab_size)), grid)
    return posterior_summary(grid, normalized(log_post), counts.steps())
