"""95% intervals from a bootstrap over tasks, for a statistic and for a paired difference.

Episodes of one task are not independent (the same request, several trials, several agents), so
the unit resampled is the task (paper §3: "a task's four trials drawn together"): each draw picks
tasks with replacement and every row of a picked task comes along. A statistic is therefore a
function of task weights: `stat(W)` takes a (draws × tasks) matrix of how many times each task
was picked and returns one value per draw. Most statistics here are ratios of sums, so one matrix
product evaluates every draw at once.

A difference between two replays of the same tasks uses the same draws for both (paired), so
the difference of two identical replays is exactly zero in the point and in every draw. Draws are
seeded and depend only on (number of tasks, draws, seed): the same call gives the same interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

import numpy as np
from pydantic import BaseModel

from stretto_core.errors import StrettoError

DEFAULT_DRAWS = 1000
"""Bootstrap draws per interval."""

DEFAULT_SEED = 0

CONFIDENCE = 0.95
"""Intervals are the central 95% of the draws (percentile bootstrap)."""

Stat = Callable[[np.ndarray], np.ndarray]
"""A statistic of task weights: (draws × tasks) -> (draws,)."""


class Interval(BaseModel):
    """A point estimate with its 95% interval; None where the statistic is undefined (no data)."""

    point: float | None
    low: float | None = None
    high: float | None = None

    def excludes_zero(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)


@dataclass(frozen=True)
class Clusters:
    """Rows grouped by task: `index[i]` is row i's task, numbered in the order of `keys`."""

    keys: tuple[Hashable, ...]
    index: np.ndarray

    @classmethod
    def of(cls, keys: Sequence[Hashable], order: Sequence[Hashable] | None = None) -> "Clusters":
        """Group rows by their keys; `order` fixes the tasks' numbering (and may list extra tasks)."""
        numbering: dict[Hashable, int] = {}
        for key in (order if order is not None else sorted(set(keys), key=repr)):
            numbering.setdefault(key, len(numbering))
        try:
            index = np.fromiter((numbering[k] for k in keys), dtype=np.int64, count=len(keys))
        except KeyError as exc:
            raise StrettoError(f"bootstrap: row key {exc.args[0]!r} is not among the tasks given") from None
        return cls(tuple(numbering), index)

    @property
    def size(self) -> int:
        return len(self.keys)

    def sums(self, values: Sequence[float] | np.ndarray) -> np.ndarray:
        """Per-task sums of one value per row."""
        values = np.asarray(values, dtype=float)
        if values.shape != self.index.shape:
            raise StrettoError(f"bootstrap: {values.shape[0]} values for {self.index.shape[0]} rows")
        return np.bincount(self.index, weights=values, minlength=self.size)


def draw_weights(tasks: int, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(draws × tasks): how many times each task is picked in each draw of `tasks` picks."""
    if tasks <= 0:
        return np.zeros((draws, 0))
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, tasks, size=(draws, tasks))
    flat = (picks + tasks * np.arange(draws)[:, None]).ravel()
    return np.bincount(flat, minlength=draws * tasks).reshape(draws, tasks).astype(float)


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def bootstrap(stat: Stat, tasks: int, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> Interval:
    """The statistic on every task once, with the central 95% of its values over the draws."""
    if tasks <= 0:
        return Interval(point=None)
    with np.errstate(divide="ignore", invalid="ignore"):
        point = _finite(float(stat(np.ones((1, tasks)))[0]))
        if point is None:
            return Interval(point=None)
        values = np.asarray(stat(draw_weights(tasks, draws, seed)), dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return Interval(point=point)
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(point=point, low=float(low), high=float(high))


def paired_difference(stat_a: Stat, stat_b: Stat, tasks: int, draws: int = DEFAULT_DRAWS,
                      seed: int = DEFAULT_SEED) -> Interval:
    """b − a over the same draws of the same tasks (both statistics must number tasks alike)."""
    return bootstrap(lambda w: stat_b(w) - stat_a(w), tasks, draws, seed)


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> Stat:
    """Σ numerator / Σ denominator over the drawn tasks (per-task sums given)."""
    return lambda w: (w @ numerator) / (w @ denominator)


def format_interval(interval: Interval | None, scale: float = 1.0, digits: int = 1, unit: str = "",
                    signed: bool = False) -> str:
    """`26.1% [24.0, 28.1]` (scale 100, unit %); `+3.5 [2.3, 4.9]` for a signed difference; `–` if none."""
    if interval is None or interval.point is None:
        return "–"
    sign = "+" if signed else ""
    text = f"{interval.point * scale:{sign}.{digits}f}{unit}"
    if interval.low is None or interval.high is None:
        return text
    if signed and interval.low == interval.high == interval.point == 0:
        return text  # a difference that is zero in every draw: the two made the same lookups
    return f"{text} [{interval.low * scale:.{digits}f}, {interval.high * scale:.{digits}f}]"
