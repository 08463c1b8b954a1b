"""The SDK overhead benchmarks, run with the recorder before batching and with this one, in one process.

    .venv/bin/python benchmarks/recorder_in_adapters.py [--sdks openai,adk,langgraph,claude] [--pairs 2]
                                                        [--before main] [--json recorder_in_adapters.json]

Each `benchmarks/adapter_overhead_<sdk>.py` is run in-process `--pairs` times with each recorder,
alternating (before, now, before, now...): the adapters' sessions are recorded by the class put in
`stretto_core.serve.live.SessionRecorder`, `--before`'s (a git revision, loaded from git) or this
tree's. Each run's own lines about the no-lookup case are printed under its label, and its JSON
is kept, so every figure is the benchmark's own, side by side from one run on one machine.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from recorder_batching import load_before  # noqa: E402

from stretto_core.serve import live  # noqa: E402
from stretto_core.sessions import recorder as now  # noqa: E402

OUT_FLAG = {"openai": "--json", "adk": "--out", "langgraph": "--out", "claude": "--out"}


def run_one(sdk: str, recorder_class: Any, out: Path) -> tuple[list[str], dict[str, Any]]:
    """One run of the SDK's benchmark with `recorder_class` recording: its lines on no lookup, its JSON."""
    module = importlib.import_module(f"adapter_overhead_{sdk}")
    argv = [OUT_FLAG[sdk], str(out)]
    saved_argv, saved_class = sys.argv, live.SessionRecorder
    printed = io.StringIO()
    try:
        sys.argv = [f"adapter_overhead_{sdk}.py", *argv]
        live.SessionRecorder = recorder_class  # type: ignore[misc]
        with contextlib.redirect_stdout(printed):
            module.main(argv) if sdk in ("openai", "adk") else module.main()
    finally:
        sys.argv, live.SessionRecorder = saved_argv, saved_class  # type: ignore[misc]
    lines = [line for line in printed.getvalue().splitlines() if "no lookup" in line or "no_lookup" in line]
    return lines, json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdks", default="openai,adk,langgraph,claude")
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--before", default="main", help="git revision whose recorder is 'before'")
    parser.add_argument("--json", type=Path, default=Path("recorder_in_adapters.json"))
    args = parser.parse_args(argv)
    before = load_before(args.before)
    if before is None:
        print(f"git cannot show {args.before}'s recorder; nothing to compare")
        return 1
    recorders = {f"before ({args.before})": before.SessionRecorder, "now": now.SessionRecorder}
    report: dict[str, Any] = {"benchmark": "recorder_in_adapters", "before_revision": args.before,
                              "pairs": args.pairs, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="stretto-recorder-adapters-") as scratch:
        for sdk in args.sdks.split(","):
            print(f"{sdk}:")
            runs: list[dict[str, Any]] = []
            for pair in range(args.pairs):
                for label, recorder_class in recorders.items():
                    lines, data = run_one(sdk, recorder_class, Path(scratch) / f"{sdk}-{pair}-{len(runs)}.json")
                    runs.append({"recorder": label, "pair": pair, "result": data})
                    print(f"  [{label}, pair {pair + 1}]")
                    for line in lines:
                        print(f"    {line.strip()}")
            report["runs"][sdk] = runs
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
