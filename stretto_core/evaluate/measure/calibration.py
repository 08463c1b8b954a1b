"""Is a score calibrated against use before the next write? Table 2 and Figure 3 of the paper.

Every lookup a speculator weighed in replay (`replay(..., weigh=True)`) is logged with two scores,
the next-step score p·ρ (`score_next`) and the use-before-write score r·ρ (`score_use`), and the
event both are judged against: the agent made that call before its next write (`used`). Each
score is judged over the lookups its own speculator weighed: the next-step score in the
next-step replay, the use-before-write score in the use-before-write replay (paper Table 2, whose
two lookup counts are those of the two replays).

ECE: over ten equal-width bins of the score, the lookups' share in each bin times the gap between
the bin's mean score and its share used. Brier: the mean squared gap between score and outcome.
AUC: the chance that a used lookup outscores an unused one, ties counting one half. Each with a
95% interval on the difference (use − next) from a paired bootstrap over the tasks both replays
weighed lookups in.
"""

from __future__ import annotations

from typing import Callable, Hashable, Sequence

import numpy as np
from pydantic import BaseModel

from stretto_core.errors import StrettoError
from stretto_core.evaluate.measure.bootstrap import (DEFAULT_DRAWS, DEFAULT_SEED, Clusters, Interval, Stat, bootstrap,
                                            paired_difference)
from stretto_core.evaluate.measure.metrics import by_app, task_key
from stretto_core.evaluate.measure.tables import markdown_table
from stretto_core.evaluate.replay.rows import ReplayResult, WeighedRow

BINS = 10
"""Equal-width bins of the score for ECE and the reliability diagram."""

def bin_of(scores: np.ndarray) -> np.ndarray:
    """Each score's bin among BINS equal-width bins of [0, 1]; a score of 1 is in the last."""
    return np.clip((np.asarray(scores, dtype=float) * BINS).astype(int), 0, BINS - 1)


def _check(scores: Sequence[float], used: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float)
    u = np.asarray(used, dtype=float)
    if s.shape != u.shape:
        raise StrettoError(f"calibration: {s.size} scores for {u.size} outcomes")
    if s.size and (np.nanmin(s) < 0 or np.nanmax(s) > 1 or np.isnan(s).any()):
        raise StrettoError("calibration: every score must be a probability between 0 and 1")
    return s, u


class ScoreSums:
    """Per-task sums a score's ECE, Brier and AUC are computed from, for any weighting of tasks."""

    def __init__(self, scores: Sequence[float], used: Sequence[bool], clusters: Clusters) -> None:
        s, u = _check(scores, used)
        n, k = clusters.size, BINS
        cell = clusters.index * k + bin_of(s)
        self.count = np.bincount(cell, minlength=n * k).reshape(n, k).astype(float)
        self.score = np.bincount(cell, weights=s, minlength=n * k).reshape(n, k)
        self.hits = np.bincount(cell, weights=u, minlength=n * k).reshape(n, k)
        self.squared = clusters.sums((s - u) ** 2)
        self.rows = clusters.sums(np.ones_like(s))
        levels, level = np.unique(s, return_inverse=True) if s.size else (np.zeros(0), np.zeros(0, dtype=int))
        m = len(levels)
        cell = clusters.index * m + level
        self.pos = np.bincount(cell, weights=u, minlength=n * m).reshape(n, m)
        self.neg = np.bincount(cell, weights=1 - u, minlength=n * m).reshape(n, m)

    def ece(self, w: np.ndarray) -> np.ndarray:
        gap = np.abs(w @ self.score - w @ self.hits).sum(axis=1)
        return gap / (w @ self.count).sum(axis=1)

    def brier(self, w: np.ndarray) -> np.ndarray:
        return (w @ self.squared) / (w @ self.rows)

    def auc(self, w: np.ndarray) -> np.ndarray:
        pos, neg = w @ self.pos, w @ self.neg  # (draws × score levels), levels in increasing order
        below = np.cumsum(neg, axis=1) - neg
        wins = (pos * (below + 0.5 * neg)).sum(axis=1)
        return wins / (pos.sum(axis=1) * neg.sum(axis=1))

    def stat(self, name: str) -> Stat:
        return getattr(self, name)


def _point(name: str, scores: Sequence[float], used: Sequence[bool]) -> float | None:
    sums = ScoreSums(scores, used, Clusters.of([0] * len(scores), order=[0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(sums.stat(name)(np.ones((1, 1)))[0])
    return value if np.isfinite(value) else None


def ece(scores: Sequence[float], used: Sequence[bool]) -> float | None:
    """Expected calibration error over BINS equal-width bins; None without lookups."""
    return _point("ece", scores, used)


def brier(scores: Sequence[float], used: Sequence[bool]) -> float | None:
    """Mean squared error of the score against the outcome; None without lookups."""
    return _point("brier", scores, used)


def auc(scores: Sequence[float], used: Sequence[bool]) -> float | None:
    """Rank AUC (Mann–Whitney, ties one half); None unless both outcomes occur."""
    return _point("auc", scores, used)


class ReliabilityBin(BaseModel):
    low: float
    high: float
    lookups: int
    mean_score: float | None
    share_used: float | None


def reliability(scores: Sequence[float], used: Sequence[bool]) -> list[ReliabilityBin]:
    """Per bin: lookups, their mean score and the share used (Figure 3)."""
    s, u = _check(scores, used)
    b = bin_of(s)
    out = []
    for i in range(BINS):
        mask = b == i
        n = int(mask.sum())
        out.append(ReliabilityBin(low=i / BINS, high=(i + 1) / BINS, lookups=n,
                                  mean_score=float(s[mask].mean()) if n else None,
                                  share_used=float(u[mask].mean()) if n else None))
    return out


class CalibrationRow(BaseModel):
    """Table 2 for one group: each score over its own replay's lookups, and use − next."""

    group: str
    tasks: int
    lookups_next: int
    lookups_use: int
    used_next: int
    used_use: int
    ece_next: Interval
    ece_use: Interval
    ece_difference: Interval
    brier_next: Interval
    brier_use: Interval
    brier_difference: Interval
    auc_next: Interval
    auc_use: Interval
    auc_difference: Interval
    reliability_next: list[ReliabilityBin]
    reliability_use: list[ReliabilityBin]


def default_task(row: WeighedRow) -> Hashable:
    return row.task_id if row.task_id else f"session:{row.session_id}"


def calibrate(next_rows: Sequence[WeighedRow], use_rows: Sequence[WeighedRow], *, group: str = "All",
              task_of: Callable[[WeighedRow], Hashable] = default_task, draws: int = DEFAULT_DRAWS,
              seed: int = DEFAULT_SEED) -> CalibrationRow:
    """Calibrate `score_next` over the next-step replay's weighed rows and `score_use` over the
    use-before-write replay's, on the tasks both weighed lookups in."""
    tasks = sorted({task_of(r) for r in next_rows} & {task_of(r) for r in use_rows}, key=repr)
    keep = set(tasks)
    nx = [r for r in next_rows if task_of(r) in keep]
    us = [r for r in use_rows if task_of(r) in keep]
    a = ScoreSums([r.score_next for r in nx], [r.used for r in nx], Clusters.of([task_of(r) for r in nx], tasks))
    b = ScoreSums([r.score_use for r in us], [r.used for r in us], Clusters.of([task_of(r) for r in us], tasks))
    n = len(tasks)
    found: dict[str, Interval] = {}
    for name in ("ece", "brier", "auc"):
        found[f"{name}_next"] = bootstrap(a.stat(name), n, draws, seed)
        found[f"{name}_use"] = bootstrap(b.stat(name), n, draws, seed)
        found[f"{name}_difference"] = paired_difference(a.stat(name), b.stat(name), n, draws, seed)
    return CalibrationRow(group=group, tasks=n, lookups_next=len(nx), lookups_use=len(us),
                          used_next=sum(r.used for r in nx), used_use=sum(r.used for r in us),
                          reliability_next=reliability([r.score_next for r in nx], [r.used for r in nx]),
                          reliability_use=reliability([r.score_use for r in us], [r.used for r in us]), **found)


def calibrate_by_app(next_replay: ReplayResult, use_replay: ReplayResult, draws: int = DEFAULT_DRAWS,
                     seed: int = DEFAULT_SEED) -> list[CalibrationRow]:
    """Table 2 per app, then `All` when there are several, from the two speculators' weighed replays."""
    for name, replay, policy in (("first", next_replay, "next"), ("second", use_replay, "use")):
        if replay.config.policy != policy:
            raise StrettoError(f"the {name} replay is of policy {replay.config.policy!r}; give the next-step "
                               "replay first and the use-before-write replay second")
        if not replay.weighed_rows:
            raise StrettoError(f"the {policy} replay logged no weighed lookups: replay it with --weigh")
    keys = {r.session_id: task_key(r) for r in (*next_replay.episode_rows, *use_replay.episode_rows)}
    nexts, uses = by_app(next_replay), by_app(use_replay)
    groups = [(app, nexts[app], uses[app]) for app in sorted(set(nexts) & set(uses))]
    if len(groups) > 1:
        groups.append(("All", next_replay, use_replay))
    return [calibrate(a.weighed_rows, b.weighed_rows, group=app, task_of=lambda row: keys[row.session_id],
                      draws=draws, seed=seed) for app, a, b in groups]


def render_calibration(rows: Sequence[CalibrationRow]) -> str:
    """Table 2: lookups weighed, then ECE, Brier and AUC as `next → use [difference interval]`."""
    def cell(row: CalibrationRow, name: str) -> str:
        a, b, d = (getattr(row, f"{name}_{s}") for s in ("next", "use", "difference"))
        if a.point is None or b.point is None:
            return "–"
        interval = f" [{d.low:+.3f}, {d.high:+.3f}]" if d.low is not None and d.high is not None else ""
        return f"{a.point:.3f} → {b.point:.3f}{interval}"

    columns = {
        "Group": "group",
        "Lookups weighed (next / use)": lambda r: f"{r.lookups_next:,} / {r.lookups_use:,}",
        "ECE, next step → use before write": lambda r: cell(r, "ece"),
        "Brier": lambda r: cell(r, "brier"),
        "AUC": lambda r: cell(r, "auc"),
    }
    return markdown_table(rows, columns, right=["Lookups weighed (next / use)"])


__all__ = ["BINS", "CalibrationRow", "ReliabilityBin", "auc", "brier", "calibrate", "calibrate_by_app", "ece",
           "reliability", "render_calibration"]
