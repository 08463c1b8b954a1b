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
from the grid's histogram (each point's mass spread evenly over its cell). The computation is
deterministic: no sampling.

A regular process (each context followed by one action) gives small α: trust the longest
context. Steps that look like their shorter context's (near-uniform data) give large α.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from stretto_core.learn.counts import Counts

if TYPE_CHECKING:
    import numpy as np

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



def log_alpha_grid() -> "np.ndarray":
    """The grid of log α the posterior is computed on (numpy loads only when learning)."""
    import numpy as np

    return np.linspace(LOG_ALPHA_MIN, LOG_ALPHA_MAX, GRID_POINTS)


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


def alphas_of(log_alphas: "np.ndarray | None", vocab_size: int) -> "np.ndarray":
    """The α values of a grid of log α (the default grid when None), for a vocabulary of at least one action."""
    import numpy as np

    if vocab_size < 1:
        raise ValueError("the vocabulary needs at least one action")
    return np.exp(np.asarray(log_alpha_grid() if log_alphas is None else log_alphas, dtype=float))


def log_marginal_likelihood(counts: Counts, vocab_size: int,
                            log_alphas: "np.ndarray | None" = None) -> np.ndarray:
    """log ML(α) of the habit's counts at each log α of the grid (see the module docstring)."""
    import numpy as np
    from scipy.special import gammaln

    alphas = alphas_of(log_alphas, vocab_size)
    out = np.zeros_like(alphas)
    prev_index: dict[tuple[tuple[str, ...], str], int] = {}
    prev_pred: np.ndarray | None = None
    for j in range(counts.order + 1):
        level = counts.habit_level(j)
        if not level:
            break
        totals: list[float] = []
        entry_n: list[float] = []
        entry_total: list[float] = []
        parents: list[int] = []
        index: dict[tuple[tuple[str, ...], str], int] = {}
        for ctx in sorted(level):
            total, row = level[ctx]
            totals.append(total)
            for action in sorted(row):
                index[(ctx, action)] = len(entry_n)
                entry_n.append(row[action])
                entry_total.append(total)
                if j > 0:
                    parents.append(prev_index[(ctx[1:], action)])
        n_ctx = np.asarray(totals)[:, None]
        n_a = np.asarray(entry_n)[:, None]
        n_tot = np.asarray(entry_total)[:, None]
        if j == 0 or prev_pred is None:
            base = np.full((len(entry_n), 1), 1.0 / vocab_size)
        else:
            base = prev_pred[np.asarray(parents, dtype=np.int64)]
        scaled = alphas[None, :] * base
        out += len(totals) * gammaln(alphas) - gammaln(n_ctx + alphas[None, :]).sum(axis=0)
        out += (gammaln(n_a + scaled) - gammaln(scaled)).sum(axis=0)
        prev_pred = (n_a + scaled) / (n_tot + alphas[None, :])
        prev_index = index
    return out


def log_prior(log_alphas: "np.ndarray | None" = None) -> np.ndarray:
    """log density of log α under Normal(0, PRIOR_SD), up to a constant."""
    import numpy as np

    if log_alphas is None:
        log_alphas = log_alpha_grid()
    x = np.asarray(log_alphas, dtype=float)
    return -0.5 * (x / PRIOR_SD) ** 2


def posterior_weights(counts: Counts, vocab_size: int,
                      log_alphas: "np.ndarray | None" = None) -> np.ndarray:
    """The posterior of log α on the grid, normalized to sum to one."""
    import numpy as np

    if log_alphas is None:
        log_alphas = log_alpha_grid()
    log_post = log_marginal_likelihood(counts, vocab_size, log_alphas) + log_prior(log_alphas)
    weights = np.exp(log_post - log_post.max())
    return weights / weights.sum()


def alpha_posterior(counts: Counts, vocab_size: int,
                    log_alphas: "np.ndarray | None" = None) -> AlphaPosterior:
    """α's posterior median and 5%/95% quantiles given the counts; the prior alone when empty."""
    import numpy as np

    if log_alphas is None:
        log_alphas = log_alpha_grid()
    grid = np.asarray(log_alphas, dtype=float)
    return posterior_summary(grid, posterior_weights(counts, vocab_size, grid), counts.steps())


def posterior_summary(grid: "np.ndarray", weights: "np.ndarray", steps: float) -> AlphaPosterior:
    """Median and 5%/95% quantiles of a posterior on the log α grid."""
    import numpy as np

    lower, median, upper = (float(np.exp(_quantile(grid, weights, q))) for q in QUANTILES)
    return AlphaPosterior(alpha=median, lower=lower, upper=upper, steps=steps)


def _quantile(grid: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The q-quantile of a grid distribution, each point's mass spread evenly over its cell."""
    import numpy as np

    if len(grid) == 1:
        return float(grid[0])
    edges = np.empty(len(grid) + 1)
    edges[1:-1] = (grid[1:] + grid[:-1]) / 2
    edges[0] = grid[0] - (grid[1] - grid[0]) / 2
    edges[-1] = grid[-1] + (grid[-1] - grid[-2]) / 2
    cdf = np.cumsum(weights)
    i = int(np.searchsorted(cdf, q))
    i = min(i, len(grid) - 1)
    below = cdf[i - 1] if i > 0 else 0.0
    share = (q - below) / weights[i] if weights[i] > 0 else 0.0
    value = edges[i] + min(max(share, 0.0), 1.0) * (edges[i + 1] - edges[i])
    return float(min(max(value, grid[0]), grid[-1]))
