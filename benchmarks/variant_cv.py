"""Ablation variants cross-validated over an app's train tasks: a check of a change before the test split sees it.

    python benchmarks/variant_cv.py --sessions DIR --app agentdojo/travel --variants full,keep_order [--folds 5]

The app's train tasks, sorted, are dealt into folds (task i goes to fold i mod k); each fold's
sessions are replayed from the record at θ = 0.3 with each variant's flow learned from the
other folds' train sessions (every agent's). Prints saved turns / detours per fold and summed,
and the ceiling turns the folds hold; the test split is never read.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from variant_diff import load_corpus
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.variants import VariantFlows, variant
from stretto_core.serve.speculator import DEFAULT_THETA


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--variants", default="full,simple,next")
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    corpus = load_corpus(args.sessions)
    train = corpus.on("train", args.app)
    if not train:
        raise SystemExit(f"no train sessions of {args.app} in {args.sessions}")
    tasks = sorted({s.header.task_id or "" for s in train})
    fold_of = {t: i % args.folds for i, t in enumerate(tasks)}
    flows = VariantFlows()
    names = args.variants.split(",")
    totals = {n: [0, 0] for n in names}
    ceiling = 0
    for k in range(args.folds):
        held = [s for s in train if fold_of[s.header.task_id or ""] == k]
        learn_from = [s for s in train if fold_of[s.header.task_id or ""] != k]
        cells = []
        for name in names:
            v = variant(name)
            result = replay_sessions(flows.model(learn_from, v), held,
                                     ReplayOptions(theta=DEFAULT_THETA, policy=v.policy, split="train"))
            totals[name][0] += result.turns_saved
            totals[name][1] += result.detours
            cells.append(f"{name} {result.turns_saved} / {result.detours}")
            if name == names[0]:
                ceiling += sum(r.ceiling_turns for r in result.episode_rows)
        print(f"fold {k} ({len(held)} sessions): " + ", ".join(cells), flush=True)
    print(f"{args.app}, {args.folds}-fold CV over {len(tasks)} train tasks ({ceiling} ceiling turns): "
          + ", ".join(f"{n} {s} / {d}" for n, (s, d) in totals.items()))


if __name__ == "__main__":
    main()
