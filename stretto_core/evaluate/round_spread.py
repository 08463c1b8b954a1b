"""How far a served-loop round may stray from the unserved reference before it says anything.

A round of the served loop (`served_loop.py`) scores a flow on 4–66 episodes. A flow learned once
from the same sessions unserved (the reference) is the yardstick, but on so few episodes the
reference's own totals move by more than 10% from round to round: which episodes a round holds
decides as much as which flow served them. So beside the strict judgement (within 10% of the
reference) a round gets a second one: it is *outside* only when it is more than 10% off the
reference *and* beyond the reference's 95% bootstrap interval over the round's tasks (each task's
episodes drawn together, `measure/bootstrap.py`). The strict count is kept: both are reported.
"""

from __future__ import annotations

import numpy as np

from stretto_core.evaluate.measure.bootstrap import Clusters, Interval, bootstrap
from stretto_core.evaluate.served_loop import RoundScore

WITHIN = 0.10
"""The share of the reference a round may differ by and still count as close."""


def within_share(value: float, reference: float, share: float = WITHIN) -> bool:
    """Strict: `value` within `share` of `reference` (a reference of 0 asks for exactly 0)."""
    return abs(value - reference) <= share * reference if reference > 0 else value == 0


def reference_spread(reference: RoundScore) -> tuple[Interval, Interval]:
    """The 95% bootstrap intervals of the reference's total turns saved and total detours on its
    round, resampling the round's tasks (every episode of a drawn task comes along)."""
    if not reference.by_episode:
        return Interval(point=None), Interval(point=None)
    clusters = Clusters.of([task for task, _, _ in reference.by_episode])
    saved = clusters.sums([float(s) for _, s, _ in reference.by_episode])
    detours = clusters.sums([float(d) for _, _, d in reference.by_episode])
    return (bootstrap(lambda w: w @ saved, clusters.size), bootstrap(lambda w: w @ detours, clusters.size))


def beyond(value: float, interval: Interval) -> bool:
    """Whether `value` lies outside the interval (an interval without bounds holds only its point)."""
    if interval.low is None or interval.high is None:
        return interval.point is None or not np.isclose(value, interval.point)
    return value < interval.low - 1e-9 or value > interval.high + 1e-9


def outside(score: RoundScore, reference: RoundScore, share: float = WITHIN) -> dict[str, bool]:
    """Per measure (`saved`, `detours`): strictly outside (more than `share` off the reference),
    and outside beyond noise (that, and beyond the reference's bootstrap interval)."""
    saved_interval, detours_interval = reference_spread(reference)
    strict_saved = not within_share(score.saved, reference.saved, share)
    strict_detours = not within_share(score.detours, reference.detours, share)
    return {"saved": strict_saved, "detours": strict_detours,
            "saved_beyond_noise": strict_saved and beyond(score.saved, saved_interval),
            "detours_beyond_noise": strict_detours and beyond(score.detours, detours_interval)}
