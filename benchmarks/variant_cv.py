"""Ablation variants cross-validated over an app's train tasks: a check of a change before the test split sees it.

    python benchmarks/variant_cv.py --sessions DIR --app agentdojo/travel --variants full,score_order [--folds 5]
    python benchmarks/variant_cv.py --sessions DIR --app tau2/retail --variants full --folds-by hash --learn-from other-agents

The app's train tasks are dealt into folds, and each fold's sessions are replayed from the
record at θ = 0.3 with each variant's flow learned from the other folds' train sessions; the
test split is never read. Two choices, each a flag, since numbers made one way are not
comparable with numbers made the other:

- `--folds-by order` (default): the tasks sorted, task i in fold i mod k; `hash`: by a hash of
  the task id (a task keeps its fold when tasks are added);
- `--learn-from all` (default): every agent's sessions of the other folds; `other-agents`: a
  held-out agent's flow learns only from the other agents' sessions of the other folds, as
  `stretto ablate` learns a test agent's flow (or from every agent's, where it has none).

Prints saved turns / detours per fold and summed per variant, the ceiling turns the folds
hold, and with `--json OUT` each variant's totals (episodes, saved, ceiling, detours, lookups,
used).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Callable, Sequence

from variant_diff import load_corpus
from stretto_core.evaluate.site_calibration import cross_fit_parts as fold_parts, fold_key, folds_by_hash
from stretto_core.evaluate.measure.metrics import replay_each
from stretto_core.evaluate.replay.run import ReplayOptions
from stretto_core.evaluate.variants import VariantFlows, variant
from stretto_core.serve.speculator import DEFAULT_THETA

TOTALS = ("episodes", "turns_saved", "ceiling_turns", "detours", "lookups", "used")


def folds_by_order(tasks: Sequence[str], folds: int) -> dict[str, int]:
    """Sorted tasks dealt round the folds: task i goes to fold i mod k."""
    return {t: i % folds for i, t in enumerate(sorted(tasks))}


FOLD_RULES: dict[str, Callable[[Sequence[str], int], dict[str, int]]] = {
    "order": folds_by_order, "hash": folds_by_hash}


task_of = fold_key
"""A session's task (its id where it has none): what keeps it in its fold."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--variants", default="full,simple,next")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--folds-by", choices=sorted(FOLD_RULES), default="order")
    parser.add_argument("--learn-from", choices=("all", "other-agents"), default="all")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    train = load_corpus(args.sessions).on("train", args.app)
    if not train:
        raise SystemExit(f"no train sessions of {args.app} in {args.sessions}")
    tasks = sorted({task_of(s) for s in train})
    fold_of = FOLD_RULES[args.folds_by](tasks, args.folds)
    flows, names = VariantFlows(), args.variants.split(",")
    totals = {n: dict.fromkeys(TOTALS, 0) for n in names}
    for k in range(args.folds):
        parts = fold_parts(train, fold_of, k, args.learn_from == "other-agents")
        cells = []
        for name in names:
            v = variant(name)
            pairs = [(flows.model(learn_from, v), held) for learn_from, held in parts]
            if not pairs:
                continue
            result = replay_each(pairs, ReplayOptions(theta=DEFAULT_THETA, policy=v.policy, split="train",
                                                      processes=1))
            for field in TOTALS:
                totals[name][field] += getattr(result, field)
            cells.append(f"{name} {result.turns_saved} / {result.detours}")
        print(f"fold {k} ({sum(len(h) for _, h in parts)} sessions): " + ", ".join(cells), flush=True)
    ceiling = totals[names[0]]["ceiling_turns"]
    print(f"{args.app}, {args.folds}-fold CV (folds by {args.folds_by}, learning from {args.learn_from}) over "
          f"{len(tasks)} train tasks ({ceiling} ceiling turns): "
          + ", ".join(f"{n} {t['turns_saved']} / {t['detours']} ({t['turns_saved'] / max(1, ceiling):.1%}, "
                      f"{t['detours'] / max(1, t['episodes']):.2f} per episode)" for n, t in totals.items()))
    if args.json is not None:
        args.json.write_text(json.dumps(totals, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
