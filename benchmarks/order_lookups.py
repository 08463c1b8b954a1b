"""What the state held when each order lookup was made, and how often each kind was used (CV on train).

    python benchmarks/order_lookups.py --sessions DIR [--app tau2/retail] [--tool get_order_details] [--json OUT]

Replays retail's train tasks in the 5 folds of `variant_cv.py --folds-by hash --learn-from
other-agents` (a flow learned from the other agents' sessions of the other folds; the test split is never read), one episode at a time, and
records at every lookup of `--tool` what the speculator's state held: the pick's mention class,
how many orders the user has, how many were read before, the pick's place in the list, whether
an order read holds an item the user named, a few of the user's words and the statuses read.
Prints, per feature and value, used / made.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from variant_cv import folds_by_hash, fold_parts, task_of
from variant_diff import load_corpus
from stretto_core.evaluate.measure.metrics import replay_each
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.evaluate.replay.run import ReplayOptions
from stretto_core.evaluate.site_calibration import NotedBindings
from stretto_core.evaluate.variants import VariantFlows, variant
from stretto_core.learn.bindings.mention import named_view
from stretto_core.learn.bindings.pick import pool_of
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.state import call_key
from stretto_core.sessions.values import normalize

WORDS = ("cancel", "return", "exchange", "orders", "all", "address", "refund")
ITEM_PATHS = ("$.items[*].item_id", "$.items[*].product_id", "$.items[*].name")


def features(state: Any, tool: str, arguments: dict[str, Any], mention: str) -> dict[str, Any]:
    """What the state held for one order lookup (τ² retail's shapes: `$.orders[*]`, `$.order_id`)."""
    users = pool_of(state, "get_user_details")
    orders = [normalize(v) for v in users[0].index.by_path.get("$.orders[*]", [])] if users else []
    reads = pool_of(state, tool)
    done = set(state.passed_values(tool, "order_id")) | {
        normalize(v) for e in reads for v in e.index.by_path.get("$.order_id", [])}
    pick = normalize(next(iter(arguments.values()), None))
    statuses = {str(v).lower() for e in reads for v in e.index.by_path.get("$.status", [])}
    return {
        "class": mention, "orders": len(orders), "read before": len(done & set(orders)),
        "place in the list": orders.index(pick) if pick in orders else -1,
        "an order read holds a named item": any(
            path in e.index.by_path and named_view(state, e, path) is not None for e in reads for path in ITEM_PATHS),
        **{f'said "{w}"': w in state.user.text for w in WORDS},
        "a pending order read": "pending" in statuses, "a delivered order read": "delivered" in statuses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", default="tau2/retail")
    parser.add_argument("--tool", default="get_order_details")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    train = load_corpus(args.sessions).on("train", args.app)
    v, flows = variant("full"), VariantFlows()

    def note(tool: str, site: str, state: Any, got: Any) -> dict[str, Any] | None:
        return features(state, tool, got.arguments, getattr(got, "mention", "plain")) if tool == args.tool else None

    rows: list[dict[str, Any]] = []
    fold_of = folds_by_hash(sorted({task_of(s) for s in train}), args.folds)
    for k in range(args.folds):
        for learn_from, sessions in fold_parts(train, fold_of, k, other_agents=True):
            model = flows.model(learn_from, v)
            for session in sessions:  # one at a time: a lookup's features are its own episode's
                rec = NotedBindings(model, note)
                result = replay_each([(rec, prepare_sessions([session]))],
                                     ReplayOptions(theta=DEFAULT_THETA, policy=v.policy, processes=1))
                for r in result.lookup_rows:
                    if r.tool == args.tool:
                        rows.append({**(rec.seen.get((call_key(r.tool, r.arguments), r.site)) or {}), "site": r.site, "used": r.used,
                                     "score": r.score})
    print(f"{args.app}, {args.tool}, {args.folds} folds over the train tasks: {len(rows)} lookups, "
          f"{sum(r['used'] for r in rows)} used\n\n| Feature | Value | Used / made | Mean score |\n|---|---|---|---|")
    for name in [k for k in (rows[0] if rows else {}) if k not in ("used", "score")]:
        cells: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0])
        for r in rows:
            cell = cells[str(r.get(name))]
            cell[0] += 1
            cell[1] += r["used"]
            cell[2] += r["score"]
        for value, (n, used, score) in sorted(cells.items()):
            print(f"| {name} | {value} | {used:.0f} / {n:.0f} | {score / n:.2f} |")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
