"""What the class lift's counts cost learning: one app's train split learned with them and without, side by side.

    python benchmarks/class_lift_cost.py [--sessions DIR] [--app tau2/retail] [--warm tau2/airline] [--rounds 5] [--json OUT]

In one process (after learning `--warm` once, so imports and shared caches are settled), the app's
train sessions are learned round after round, alternately as they are and with the class-lift
counts (`learn/bindings/named.py`: `count_decision`, `flush_named`) turned off, the result
indexes emptied before each learn. Prints the best round's sessions per CPU-second of each and
their ratio. The flow learned without the counts has no lifts: this measures a price, not a
variant to serve.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import stretto_core.learn.bindings.evidence as evidence
import stretto_core.sessions.state as state
from stretto_core.flow.stream import choose, learn_chosen


def _off(*_args: object, **_kwargs: object) -> None:
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True, help="ingested sessions (stretto ingest ...)")
    parser.add_argument("--app", default="tau2/retail")
    parser.add_argument("--warm", default="tau2/airline")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    learn_chosen(choose([str(args.sessions)], "train", apps=[args.warm]))
    chosen = choose([str(args.sessions)], "train", apps=[args.app])
    counted = (evidence.count_decision, evidence.flush_named)
    best = {"with": float("inf"), "without": float("inf")}
    try:
        for _ in range(args.rounds):
            for mode in best:
                evidence.count_decision, evidence.flush_named = counted if mode == "with" else (_off, _off)
                state._indexes.clear()
                start = time.process_time()
                learn_chosen(chosen)
                best[mode] = min(best[mode], time.process_time() - start)
    finally:
        evidence.count_decision, evidence.flush_named = counted
    n = len(chosen.files)
    rates = {mode: n / seconds for mode, seconds in best.items()}
    print(f"{args.app} train, {n} sessions, best of {args.rounds} rounds, sessions per CPU-second: "
          f"with the class-lift counts {rates['with']:.0f}, without {rates['without']:.0f}: "
          f"×{rates['without'] / rates['with']:.2f} without")
    if args.json is not None:
        args.json.write_text(json.dumps({"app": args.app, "sessions": n, "rates": rates}, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
