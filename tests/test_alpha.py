"""α from its posterior given the counts."""

from __future__ import annotations

import math
import random

from stretto_core.learn.alpha import LOG_ALPHA_GRID, alpha_posterior, log_marginal_likelihood
from stretto_core.learn.counts import Counts

def _counts(sessions: list[list[str]]) -> Counts:
    return Counts.learn((([f"{a}/ok/0" for a in s], s) for s in sessions), lambda a: False)

def test_a_regular_process_prefers_a_small_concentration():
    # every session walks the same cycle: the longest context always knows the next step
    cycle = ["a", "b", "c", "d", "e"]
    counts = _counts([cycle * 3 for _ in range(40)])
    post = alpha_posterior(counts, vocab_size=10)
    # each deterministic context costs about its first step's base probability as α → 0, so
    # the likelihood flattens below α ≈ 0.3 and the prior holds the median near 0.15
    assert post.alpha < 0.3 and post.upper < 0.5

def test_near_uniform_steps_prefer_a_large_concentration():
    # steps drawn uniformly at random: every context looks like its shorter one
    rng = random.Random(11)
    counts = _counts([[rng.choice("abcde") for _ in range(30)] for _ in range(200)])
    post = alpha_posterior(counts, vocab_size=5)
    assert post.alpha > 20

def test_the_median_lies_between_the_5_and_95_percent_quantiles():
    rng = random.Random(3)
    counts = _counts([[rng.choice("aab") for _ in range(8)] for _ in range(20)])
    post = alpha_posterior(counts, vocab_size=4)
    assert post.lower < post.alpha < post.upper

def test_with_no_counts_the_posterior_is_the_prior():
    post = alpha_posterior(Counts(), vocab_size=4)
    assert abs(math.log(post.alpha)) < 0.01  # the prior's median, log α = 0, read off the grid
    # log α ~ Normal(0, 2): the 5% and 95% quantiles are at ∓1.645·2, read off a grid
    assert abs(math.log(post.upper) - 3.29) < 0.1 and abs(math.log(post.lower) + 3.29) < 0.1

def test_alpha_is_a_function_of_the_counts_so_merged_flows_get_the_same_one():
    rng = random.Random(5)
    sessions = [[rng.choice("abcw") for _ in range(rng.randint(1, 10))] for _ in range(50)]
    at_once = _counts(sessions)
    merged = _counts(sessions[:20]).merged(_counts(sessions[20:]))
    assert alpha_posterior(at_once, 6) == alpha_posterior(merged, 6)

def test_one_contexts_marginal_likelihood_is_the_product_of_its_polya_urn_predictions():
    # order 0: a single context whose base measure is uniform, read one step at a time
    actions = list("aabacbbba")
    counts = Counts.learn([([f"{a}/ok/0" for a in actions], actions)], lambda a: False, order=0)
    vocab = 4
    for alpha in (0.1, 1.0, 7.5):
        seen: dict[str, int] = {}
        prequential = 0.0
        for i, a in enumerate(actions):
            prequential += math.log((seen.get(a, 0) + alpha / vocab) / (i + alpha))
            seen[a] = seen.get(a, 0) + 1
        ml = log_marginal_likelihood(counts, vocab, [math.log(alpha)])[0]
        assert abs(ml - prequential) < 1e-9

def test_the_grid_is_fixed_so_the_posterior_is_deterministic():
    rng = random.Random(2)
    counts = _counts([[rng.choice("abc") for _ in range(6)] for _ in range(10)])
    assert len(LOG_ALPHA_GRID) == 121
    assert alpha_posterior(counts, 3) == alpha_posterior(counts, 3)
