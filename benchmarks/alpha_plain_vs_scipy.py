"""α in plain Python (`math.lgamma`) against the numpy/scipy version it replaced, on published runs.

    .venv/bin/python benchmarks/alpha_plain_vs_scipy.py [--before b7c779d] [FILE_OR_FOLDER ...]

For each τ²-bench trajectory file or folder (default: retail and airline under $STRETTO_DATA),
counts every session once and prints the habit's and the reach's α posterior from both
implementations, the largest relative difference of (α, 5%, 95%), and each one's CPU time. The
old modules are read from git at `--before` (they need numpy and scipy: the `bench` extra and
scipy). Fails loudly when a difference passes 1e-9.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT = ["tau2/trajectories/retail", "tau2/trajectories/airline"]


def old_modules(rev: str) -> tuple[types.ModuleType, types.ModuleType]:
    """The numpy/scipy `alpha` and `reach_alpha` modules as they were at `rev`."""
    alpha = types.ModuleType("alpha_before")
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:stretto_core/learn/alpha.py"],
                            capture_output=True, text=True, check=True).stdout
    exec(compile(source, "alpha_before.py", "exec"), alpha.__dict__)
    sys.modules["alpha_before"] = alpha
    reach = types.ModuleType("reach_alpha_before")
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:stretto_core/learn/reach_alpha.py"],
                            capture_output=True, text=True, check=True).stdout
    source = source.replace("from stretto_core.learn.alpha import", "from alpha_before import")
    exec(compile(source, "reach_alpha_before.py", "exec"), reach.__dict__)
    return alpha, reach


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=DEFAULT)
    parser.add_argument("--before", default="b7c779d")
    args = parser.parse_args()
    from stretto_core.learn import alpha, reach_alpha
    from stretto_core.learn.counts import Counts
    from stretto_core.learn.steps import session_symbols
    from stretto_core.paths import data_root
    from stretto_core.sessions.ingest import ingest_files
    from stretto_core.sessions.store import load_sessions

    old_alpha, old_reach = old_modules(args.before)
    worst = 0.0
    print("| runs | sessions | α of | plain Python | numpy/scipy | max rel. diff | CPU plain s | CPU scipy s |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for name in args.paths:
        out = Path(tempfile.mkdtemp())
        ingest_files("tau2", [data_root() / name], out)
        sessions = load_sessions([out])
        counts = Counts()
        for s in sessions:
            counts.add(*session_symbols(s), s.header.manifest.is_write)
        vocab = len(counts.actions()) + 2
        for what, new, old in (("habit", alpha.alpha_posterior, old_alpha.alpha_posterior),
                               ("reach", reach_alpha.reach_alpha_posterior, old_reach.reach_alpha_posterior)):
            started = time.process_time()
            a = new(counts, vocab)
            plain = time.process_time() - started
            started = time.process_time()
            b = old(counts, vocab)
            scipy = time.process_time() - started
            diff = max(abs(a.alpha - b.alpha) / b.alpha, abs(a.lower - b.lower) / b.lower,
                       abs(a.upper - b.upper) / b.upper)
            worst = max(worst, diff)
            print(f"| {name} | {len(sessions)} | {what} | {a.alpha:.12g} | {b.alpha:.12g} | {diff:.1e} "
                  f"| {plain:.3f} | {scipy:.3f} |")
    if worst > 1e-9:
        raise SystemExit(f"alpha_plain_vs_scipy: the implementations differ by {worst:.1e} > 1e-9")


if __name__ == "__main__":
    main()
