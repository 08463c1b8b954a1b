"""How long `stretto demo` takes, as a user waits for it: in the OpenAI Agents SDK and built in.

    .venv/bin/python benchmarks/demo_wall.py [--runs 3] [--before /path/to/older/checkout] [--json demo_wall.json]

Each run is a fresh process (imports included) writing to a scratch folder; the runs of each
harness are interleaved so a busy machine weighs on them alike, and the median is printed with
the ratio to the built-in harness. `--before` also times `stretto demo` of another checkout
(e.g. one from before the demo ran in the SDK), side by side in the same loop. The numbers each
harness printed are compared too: they must be the same.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def command(checkout: Path, home: Path, harness: str | None) -> tuple[list[str], dict[str, str]]:
    """The demo's command line and environment, running `checkout`'s code (it is also the cwd,
    which `python -m` puts first on the path)."""
    argv = [sys.executable, "-m", "stretto_core", "demo", "--home", str(home)]
    env = dict(os.environ, PYTHONPATH=f"{checkout}{os.pathsep}{checkout / 'adapters'}", STRETTO_PROGRESS="0")
    return argv + (["--harness", harness] if harness else []), env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path, default=None, help="another checkout whose `stretto demo` to time")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    cases = {"openai-agents": (REPO, "openai-agents"), "builtin": (REPO, "builtin")}
    if args.before:
        cases["before"] = (args.before.resolve(), None)
    times: dict[str, list[float]] = {name: [] for name in cases}
    printed: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="stretto-demo-wall-") as scratch:
        for run in range(args.runs):
            for name, (checkout, harness) in cases.items():
                home = Path(scratch) / f"{name}-{run}"
                argv, env = command(checkout, home, harness)
                started = time.perf_counter()
                subprocess.run(argv, check=True, capture_output=True, env=env, cwd=checkout)
                times[name].append(time.perf_counter() - started)
                printed[name] = json.loads((home / "demo.json").read_text())["live"]
    median = {name: statistics.median(t) for name, t in times.items()}
    for name, seconds in median.items():
        print(f"stretto demo ({name:<13}) {seconds:6.2f} s   ({seconds / median['builtin']:4.2f}x the built-in harness)"
              f"   turns {printed[name]['llm_turns_without']} -> {printed[name]['llm_turns_with']}")
    same = printed["openai-agents"] == printed["builtin"]
    print(f"same numbers in the SDK and built in: {'yes' if same else 'NO'}")
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "median_seconds": median, "seconds": times,
                                         "live": printed, "same": same}, indent=1) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
