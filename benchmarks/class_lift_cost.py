"""What the class lift's counts cost learning: one app's train split learned with each way of counting them, side by side.

    python benchmarks/class_lift_cost.py [--sessions DIR] [--app tau2/retail] [--warm tau2/airline]
                                         [--modes full,thin,visited,off] [--rounds 5] [--json OUT]

In one process (after learning `--warm` once, so imports and shared caches are settled), the app's
train sessions are learned round after round, once per mode of `stretto learn --class-lift`
(`learn/bindings/lift_decisions.py`: `full` counts every decision, `off` none, the others some),
the result indexes emptied before each learn. Prints the best round's sessions per CPU-second of
each mode and its ratio to the first mode's, and how many decisions each counted (their weight).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import stretto_core.sessions.state as state
from stretto_core.flow.stream import choose, learn_chosen
from stretto_core.learn.bindings.lift_decisions import CLASS_LIFT_MODES
from stretto_core.learn.bindings.model import BindingOptions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True, help="ingested sessions (stretto ingest ...)")
    parser.add_argument("--app", default="tau2/retail")
    parser.add_argument("--warm", default="tau2/airline")
    parser.add_argument("--modes", default="full,thin,visited,off")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    modes = args.modes.split(",")
    unknown = [m for m in modes if m not in CLASS_LIFT_MODES]
    if unknown:
        raise SystemExit(f"--modes: {', '.join(unknown)} not among {', '.join(CLASS_LIFT_MODES)}")
    learn_chosen(choose([str(args.sessions)], "train", apps=[args.warm]))
    chosen = choose([str(args.sessions)], "train", apps=[args.app])
    best = {mode: float("inf") for mode in modes}
    decisions: dict[str, float] = {}
    for _ in range(args.rounds):
        for mode in modes:
            state._indexes.clear()
            start = time.process_time()
            flow = learn_chosen(chosen, binding_options=BindingOptions(class_lift=mode))
            best[mode] = min(best[mode], time.process_time() - start)
            decisions[mode] = sum(flow.bindings.named.decisions.values())
    n = len(chosen.files)
    rates = {mode: n / seconds for mode, seconds in best.items()}
    print(f"{args.app} train, {n} sessions, best of {args.rounds} rounds, sessions per CPU-second:")
    for mode in modes:
        print(f"  --class-lift {mode:8s} {rates[mode]:5.0f}/s  ×{rates[mode] / rates[modes[0]]:.2f}  "
              f"(source-decisions counted, weighted: {decisions[mode]:.0f})")
    if args.json is not None:
        args.json.write_text(json.dumps({"app": args.app, "sessions": n, "rates": rates, "decisions": decisions},
                                        indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
