"""Cross-validation over a domain's train tasks: a change's gain measured without the test split.

    python benchmarks/train_folds.py --sessions DIR --app tau2/retail [--variant full] [--folds 5] [--json OUT]

The train tasks are dealt into folds by a hash of the task id. For each fold, each agent's held-out
sessions are replayed from the record at θ = 0.3 with a flow learned from the other agents'
sessions of the other folds (as `stretto ablate` learns a test agent's flow from the other agents'
train sessions); the totals over the folds are printed: episodes, saved turns of the ceiling,
detours, lookups.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import defaultdict
from pathlib import Path

from variant_diff import load_corpus
from stretto_core.evaluate.measure.bench_plan import agent_key
from stretto_core.evaluate.measure.metrics import replay_each
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.evaluate.replay.run import ReplayOptions
from stretto_core.evaluate.variants import VariantFlows, variant
from stretto_core.serve.speculator import DEFAULT_THETA

TOTALS = ("episodes", "turns_saved", "ceiling_turns", "detours", "lookups", "used")


def fold_of(task_id: str | None, folds: int) -> int:
    return int(hashlib.sha1(str(task_id).encode()).hexdigest(), 16) % folds


def fold_parts(train: list, k: int, folds: int) -> list[tuple[list, list]]:
    """Fold k's parts, one per agent: (the sessions its flow learns from, its held-out sessions):
    the other agents' sessions of the other folds (all of the other folds' when it has no other)."""
    rest = [s for s in train if fold_of(s.header.task_id, folds) != k]
    held: dict[str, list] = defaultdict(list)
    for s in train:
        if fold_of(s.header.task_id, folds) == k:
            held[agent_key(s.header.agent_model)].append(s)
    parts = []
    for agent, sessions in sorted(held.items()):
        learn_from = [s for s in rest if agent_key(s.header.agent_model) != agent] or rest
        if learn_from:
            parts.append((learn_from, sessions))
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--variant", default="full")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    corpus = load_corpus(args.sessions)
    train = corpus.on("train", args.app)
    v, flows = variant(args.variant), VariantFlows()
    totals: dict[str, int] = defaultdict(int)
    for k in range(args.folds):
        assignments = [(flows.model(learn_from, v), prepare_sessions(sessions))
                       for learn_from, sessions in fold_parts(train, k, args.folds)]
        if not assignments:
            continue
        result = replay_each(assignments, ReplayOptions(theta=DEFAULT_THETA, policy=v.policy, processes=1))
        for name in TOTALS:
            totals[name] += getattr(result, name)
    episodes, ceiling = max(1, totals["episodes"]), max(1, totals["ceiling_turns"])
    print(f"{args.app}, {args.variant}, {args.folds} folds over the train tasks: {totals['episodes']} episodes, "
          f"{totals['turns_saved']} turns saved of {totals['ceiling_turns']} in the ceiling "
          f"({totals['turns_saved'] / ceiling:.1%}), {totals['detours']} detours "
          f"({totals['detours'] / episodes:.2f} per episode), {totals['lookups']} lookups")
    if args.json is not None:
        args.json.write_text(json.dumps(dict(totals), indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
