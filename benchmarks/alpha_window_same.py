"""α's windowed posterior against the full grid's, at every refresh of a staged flow (a check, TRAIN only).

`learn/alpha_window.py` evaluates α's log posterior only near its peak: the points more than
`window` nats below the top get weight 0.0. At the default window (746 nats) this is the full
grid's floats by construction, given one peak; a narrower window drops weights that are tiny
but not zero, so it may move α in its last digits. This walks each τ² domain's TRAIN split
one session at a time through a `StagedFlow` (as `flow stage` does) and, at every refresh, the
habit's and the reach's posteriors: each window's `AlphaPosterior` must equal the full grid's bit
for bit. It also counts the grid points each window evaluates (what its CPU is proportional to)
and whether the single-peak guard ever fell back to the full grid.

The full grid is evaluated once per refresh and each window reads from it (a point's value does
not depend on which others are evaluated with it), so the windows cost nothing extra here. No
timing: the refresh's CPU is `stage_session.py`'s.

    python benchmarks/alpha_window_same.py [--windows 746,60,50,40,30,20] [--domains retail airline telecom]
        [--out bench-out/alpha_window_same.json]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from stretto_core.flow.staged import StagedFlow
from stretto_core.flow.ir import learn
from stretto_core.learn import alpha_window
from stretto_core.learn.alpha import grid_of, habit_log_ml_at, normalized, posterior_summary, with_prior
from stretto_core.learn.counts import vocabulary
from stretto_core.learn.reach_alpha import reach_log_ml_at
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.splits import split_of
from stretto_core.sessions.store import load_sessions
from summary_file import write_summary


def train_split(domain: str) -> list:
    """A τ² domain's train sessions, ingested afresh."""
    store = Path(tempfile.mkdtemp(prefix="stretto-window-"))
    try:
        ingest_files("tau2", [data_root() / "tau2" / "trajectories" / domain], store)
        sessions = load_sessions([store])
    finally:
        shutil.rmtree(store, ignore_errors=True)
    return [s for s in sessions if split_of(s.header) == "train"]


fell_back = [0]
"""Times the single-peak guard sent a posterior to the full grid (counted by the wrapper below)."""
_evaluate_all = alpha_window._evaluate_all


def _counted(*args: object) -> list[float]:
    fell_back[0] += 1
    return _evaluate_all(*args)  # type: ignore[arg-type]


alpha_window._evaluate_all = _counted  # type: ignore[assignment]


def walk(domain: str, windows: list[float], first: int) -> dict:
    """Every refresh of the domain's train split staged one session at a time from its first
    `first` sessions: per window, the posteriors that differ from the full grid's, the points
    evaluated, and the guard's fall-backs."""
    train = train_split(domain)
    first = min(first, len(train) // 2)
    staged = StagedFlow(learn(train[:first]))
    grid = grid_of(None)
    tally = {w: {"differ": 0, "points": 0, "fell_back": 0} for w in windows}
    refreshes = 0
    for session in [None, *train[first:]]:
        if session is not None:
            staged.add(session)
        vocab = len(vocabulary(staged.counts, staged.manifest.tools))
        for at in (habit_log_ml_at(staged.counts, vocab), reach_log_ml_at(staged.counts, vocab)):
            full = with_prior(at)(grid)
            want = posterior_summary(grid, normalized(full), staged.counts.steps())
            for w in windows:
                asked: list[int] = []
                def lookup(log_alphas: list[float]) -> list[float]:
                    asked.extend(grid.index(x) for x in log_alphas)
                    return [full[grid.index(x)] for x in log_alphas]
                got = alpha_window.windowed_log_posterior(lookup, grid, w)
                tally[w]["differ"] += posterior_summary(grid, normalized(got), staged.counts.steps()) != want
                tally[w]["points"] += len(asked)
                tally[w]["fell_back"] += fell_back[0]
                fell_back[0] = 0
        refreshes += 1
    return {"domain": domain, "train": len(train), "refreshes": refreshes,
            "windows": {str(w): {**t, "points_per_posterior": round(t["points"] / (2 * refreshes), 1)}
                        for w, t in tally.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--windows", default="746,60,50,40,30,20")
    ap.add_argument("--domains", nargs="+", default=["retail", "airline", "telecom"])
    ap.add_argument("--first", type=int, default=20, help="train sessions in the flow staged first (at most half the split)")
    ap.add_argument("--out", default="bench-out/alpha_window_same.json")
    args = ap.parse_args()
    windows = [float(w) for w in args.windows.split(",")]
    results = []
    for domain in args.domains:
        got = walk(domain, windows, args.first)
        results.append(got)
        for w, t in got["windows"].items():
            print(f"{domain:8} window {w:>6} nats: {t['differ']:4} of {2 * got['refreshes']} posteriors differ "
                  f"from the full grid's; {t['points_per_posterior']:5} of 121 points evaluated; "
                  f"fell back {t['fell_back']}")
    write_summary(args.out, {"results": results})


if __name__ == "__main__":
    main()
