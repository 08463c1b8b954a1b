"""α's quick paths are the very floats of the plain computation, so flows keep their bytes.

The plain reading below is the reach's and the habit's likelihood as 69757a9 computed them (each
distinct row once, its terms added point by point); the library reuses lgamma values and skips
unread predictives (`learn/alpha.py`, `learn/reach_alpha.py`), which must change no bit.
"""

from __future__ import annotations

import math
import random
from collections import Counter

from stretto_core.learn.alpha import alphas_of, log_marginal_likelihood
from stretto_core.learn.counts import Counts
from stretto_core.learn.reach_alpha import EDGE, reach_log_marginal_likelihood


def _plain_reach(counts: Counts, vocab: int) -> list[float]:
    alphas = alphas_of(None, vocab)
    lg = math.lgamma
    out = [0.0] * len(alphas)
    actions = sorted(counts.actions())
    uniform = min(max(1.0 / vocab, EDGE), 1.0 - EDGE)
    prev_index: dict = {}
    prev_pred: list = []
    for j in range(counts.order + 1):
        habit, reach = counts.habit_level(j), counts.reach_level(j)
        if not habit:
            break
        rows: dict = {}
        times: Counter = Counter()
        index: dict = {}
        for ctx in sorted(habit):
            total, row = habit[ctx][0], reach.get(ctx, {})
            for action in actions:
                parent = prev_index.get((ctx[1:], action), -1) if prev_pred else -1
                at = rows.setdefault((total, min(row.get(action, 0.0), total), parent), len(rows))
                times[at] += 1
                index[(ctx, action)] = at
        pred: list = [[]] * len(rows)
        for (n, m, parent), at in rows.items():
            means = ([min(max(x, EDGE), 1.0 - EDGE) for x in prev_pred[parent]] if parent >= 0
                     else [uniform] * len(alphas))
            terms = []
            for al, mu in zip(alphas, means):
                a, b = al * mu, al * (1.0 - mu)
                terms.append(lg(al) - lg(a) - lg(b) - lg(n + al) + lg(m + a) + lg(n - m + b))
            for g, term in enumerate(terms):
                out[g] += times[at] * term
            pred[at] = [(m + al * mu) / (n + al) for al, mu in zip(alphas, means)]
        prev_pred, prev_index = pred, index
    return out


def _counts(seed: int) -> Counts:
    rng = random.Random(seed)
    counts = Counts()
    for _ in range(rng.randint(3, 40)):
        actions = [rng.choice("abcdw") for _ in range(rng.randint(1, 14))]
        counts.add([f"{a}/ok/0" for a in actions], actions, lambda a: a == "w", rng.choice((1.0, 0.5, 2.5)))
    return counts


def test_the_reach_s_likelihood_is_the_plain_computation_s_floats_to_the_bit() -> None:
    kinds = Counter()
    for seed in range(25):
        counts = _counts(seed)
        assert reach_log_marginal_likelihood(counts, 7) == _plain_reach(counts, 7)
        for j in range(counts.order + 1):
            for ctx, (total, _) in counts.habit_level(j).items():
                for action in counts.actions():
                    m = min(counts.reach_level(j).get(ctx, {}).get(action, 0.0), total)
                    kinds["none" if m == 0 else "all" if m == total else "some"] += 1
    assert min(kinds.values()) > 50  # rows of m = 0, of m = n and of neither, with fractional weights


def _plain_habit(counts: Counts, vocab: int) -> list[float]:
    alphas = alphas_of(None, vocab)
    lg = math.lgamma
    out = [0.0] * len(alphas)
    uniform = [1.0 / vocab] * len(alphas)
    prev_index: dict = {}
    prev_pred: list = []
    for j in range(counts.order + 1):
        level = counts.habit_level(j)
        if not level:
            break
        per_total: Counter = Counter()
        per_entry: Counter = Counter()
        kinds: dict = {}
        index: dict = {}
        for ctx in sorted(level):
            total, row = level[ctx]
            per_total[total] += 1
            for action in sorted(row):
                parent = prev_index[(ctx[1:], action)] if j > 0 and prev_pred else -1
                per_entry[(row[action], parent)] += 1
                index[(ctx, action)] = kinds.setdefault((row[action], parent, total), len(kinds))
        for total, times in per_total.items():
            for g, al in enumerate(alphas):
                out[g] += times * (lg(al) - lg(total + al))
        for (n_a, parent), times in per_entry.items():
            base = prev_pred[parent] if parent >= 0 else uniform
            for g, (al, b) in enumerate(zip(alphas, base)):
                out[g] += times * (lg(n_a + al * b) - lg(al * b))
        pred: list = [[]] * len(kinds)
        for (n_a, parent, total), at in kinds.items():
            base = prev_pred[parent] if parent >= 0 else uniform
            pred[at] = [(n_a + al * b) / (total + al) for al, b in zip(alphas, base)]
        prev_pred, prev_index = pred, index
    return out


def test_the_habit_s_likelihood_is_the_plain_computation_s_floats_to_the_bit() -> None:
    for seed in range(25):
        counts = _counts(seed)
        assert log_marginal_likelihood(counts, 7) == _plain_habit(counts, 7)
