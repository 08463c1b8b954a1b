"""How many of the lookups a flow chooses the argument check refuses, on an app's train split.

    python benchmarks/argument_shapes.py --sessions DIR --app tau2/retail [--folds 5] [--theta 0.3]

DIR holds sessions (raw published files or ingested ones); the split is the bench's (τ²-bench's
official one) and only its train side is read. For each task fold (by a hash of the task id), a
flow learned on the other folds replays the fold's sessions from the record, with the check of
each bound argument against the tool's contract and the agents' value shapes
(`serve/arguments.py`) on, and with it off; it prints lookups, turns saved and detours each way,
and the refusals the check made with their reasons. This run chose `LENGTH_FACTOR`,
`LENGTH_SLACK` and the symbol rule: a legitimate lookup the check refuses shows as a saved turn
lost here.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

from variant_diff import load_corpus

from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.site_calibration import fold_key, folds_by_hash
from stretto_core.flow.ir import learn
from stretto_core.serve import engine as engine_module
from stretto_core.serve.runtime import FlowRuntime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--theta", type=float, default=0.3)
    args = parser.parse_args()
    started = time.process_time()
    train = load_corpus(args.sessions).on("train", args.app)
    if not train:
        raise SystemExit(f"no train sessions of {args.app} in {args.sessions}")
    fold_of = folds_by_hash({fold_key(s) for s in train}, args.folds)
    refused: Counter[str] = Counter()
    original = engine_module.EngineSession._argument_refusal

    def counting(self: Any, decision: Any) -> str | None:
        why = original(self, decision)
        if why is not None:
            refused[f"{decision.tool}: {why.split(',')[0][:90]}"] += 1
        return why

    totals = {"on": Counter(), "off": Counter()}
    for k in range(args.folds):
        held = [s for s in train if fold_of[fold_key(s)] == k]
        learned = [s for s in train if fold_of[fold_key(s)] != k]
        if not held or not learned:
            continue
        model = FlowRuntime(learn(learned))
        options = ReplayOptions(theta=args.theta, processes=1)
        for mode, check in (("on", counting), ("off", lambda self, decision: None)):
            engine_module.EngineSession._argument_refusal = check  # type: ignore[method-assign]
            result = replay_sessions(model, held, options)
            totals[mode].update({"episodes": result.episodes, "llm_turns": result.llm_turns,
                                 "turns_saved": result.turns_saved, "detours": result.detours,
                                 "lookups": result.lookups})
    engine_module.EngineSession._argument_refusal = original  # type: ignore[method-assign]
    print(f"{args.app}: {len(train)} train sessions, {args.folds} task folds, θ = {args.theta}; test split not read")
    for mode in ("on", "off"):
        t = totals[mode]
        print(f"check {mode:3}: {t['episodes']} episodes, {t['llm_turns']} LLM turns, {t['lookups']} lookups, "
              f"{t['turns_saved']} turns saved, {t['detours']} detours")
    print(f"refused by the check: {sum(refused.values())}")
    for why, n in refused.most_common(15):
        print(f"  {n:5}  {why}")
    print(f"{time.process_time() - started:.0f} s CPU")


if __name__ == "__main__":
    main()
