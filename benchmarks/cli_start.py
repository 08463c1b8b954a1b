"""How fast the CLI starts: `stretto --help` and `stretto flow show`, median of several runs.

    .venv/bin/python benchmarks/cli_start.py [--runs 7] [--json cli_start.json]

Each run is a fresh process (what a user waits for); the Python interpreter's own start is
measured the same way and printed beside, so the ratio says what stretto adds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FLOW = REPO / "tests" / "fixtures" / "flows" / "tau2-retail.flow.json"


def timed(argv: list[str], runs: int) -> float:
    """The median wall time of `argv` over `runs` fresh processes, in seconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    python = [sys.executable, "-c", "pass"]
    stretto = [sys.executable, "-m", "stretto_core"]
    rows = {
        "python -c pass": timed(python, args.runs),
        "stretto --help": timed(stretto + ["--help"], args.runs),
        "stretto flow show": timed(stretto + ["flow", "show", str(FLOW)], args.runs),
    }
    base = rows["python -c pass"]
    for name, seconds in rows.items():
        print(f"{name:<20} {seconds * 1000:8.1f} ms   ({seconds / base:4.1f}x the interpreter's start)")
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "seconds": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
