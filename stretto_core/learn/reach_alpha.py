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
counted as if independent, as the habit's are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stretto_core.learn.alpha import AlphaPosterior, alphas_of, log_alpha_grid, log_prior, posterior_summary
from stretto_core.learn.counts import Counts

if TYPE_CHECKING:
    import numpy as np

EDGE = 1e-12
"""A back-off mean is kept this far inside (0, 1), where the Beta–Binomial is defined."""


def reach_log_marginal_likelihood(counts: Counts, vocab_size: int,
                                  log_alphas: "np.ndarray | None" = None) -> "np.ndarray":
    """log ML(α) of the reach's counts at each log α of the grid (module docstring)."""
    import numpy as np
    from scipy.special import gammaln

    alphas = alphas_of(log_alphas, vocab_size)[None, :]
    actions = sorted(counts.actions())
    out = np.zeros(alphas.shape[1])
    if not actions:
        return out
    # Rows of the same (n, m, mean) have the same terms: each is computed once, and the terms of
    # every row are summed in the order of the rows, so the sum is the same float.
    prev_index: dict[tuple[tuple[str, ...], str], int] = {}
    prev_pred: np.ndarray | None = None
    for j in range(counts.order + 1):
        habit = counts.habit_level(j)
        if not habit:
            break
        reach = counts.reach_level(j)
        n_rows: list[float] = []
        m_rows: list[float] = []
        parents: list[int] = []
        distinct: dict[tuple[float, float, int], int] = {}
        rows: list[int] = []
        index: dict[tuple[tuple[str, ...], str], int] = {}
        for ctx in sorted(habit):
            total = habit[ctx][0]
            row = reach.get(ctx, {})
            for action in actions:
                m_seen = min(row.get(action, 0.0), total)
                parent = prev_index.get((ctx[1:], action), -1)
                same = distinct.setdefault((total, m_seen, parent), len(n_rows))
                if same == len(n_rows):
                    n_rows.append(total)
                    m_rows.append(m_seen)
                    parents.append(parent)
                index[(ctx, action)] = same
                rows.append(same)
        n = np.asarray(n_rows)[:, None]
        m = np.asarray(m_rows)[:, None]
        # A row's mean is its parent's predictive (1/V without one), so what depends on the mean
        # alone is computed once per parent, and what depends on n alone once per n: the same
        # floats, a third of the gammaln calls.
        totals, of_total = np.unique(np.asarray(n_rows), return_inverse=True)
        owners, of_owner = np.unique(np.asarray(parents if prev_pred is not None else [-1] * len(n_rows)),
                                     return_inverse=True)
        mean = np.full((len(owners), alphas.shape[1]), 1.0 / vocab_size)
        if prev_pred is not None:
            known = owners >= 0
            mean[known] = prev_pred[owners[known]]
        mean = np.clip(mean, EDGE, 1.0 - EDGE)
        a_of, b_of = alphas * mean, alphas * (1.0 - mean)
        a, b = a_of[of_owner], b_of[of_owner]
        terms = (gammaln(alphas) - gammaln(totals[:, None] + alphas)[of_total] + gammaln(m + a) - gammaln(a_of)[of_owner]
                 + gammaln(n - m + b) - gammaln(b_of)[of_owner])
        out += terms[np.asarray(rows, dtype=np.intp)].sum(axis=0)
        prev_pred = (m + a) / (n + alphas)
        prev_index = index
    return out


def reach_alpha_posterior(counts: Counts, vocab_size: int,
                          log_alphas: "np.ndarray | None" = None) -> AlphaPosterior:
    """The reach's α: posterior median and 5%/95% quantiles (the prior alone when empty)."""
    import numpy as np

    grid = np.asarray(log_alpha_grid() if log_alphas is None else log_alphas, dtype=float)
    log_post = reach_log_marginal_likelihood(counts, vocab_size, grid) + log_prior(grid)
    weights = np.exp(log_post - log_post.max())
    return posterior_summary(grid, weights / weights.sum(), counts.steps())
