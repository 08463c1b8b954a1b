"""`stretto learn --agent`'s default weights for harness-mates and other harnesses, chosen on the train split.

    python benchmarks/harness_prior_cv.py --sessions DIR [--apps tau2/airline,tau2/retail] [--folds 5]
        [--draws 1000] [--json OUT]

DIR holds ingested τ²-bench sessions (`stretto ingest tau2 .../trajectories --out DIR`). The rule
(`flow/harness.py`: the agent's own sessions as data, harness-mates and other harnesses as two
power priors of `mates` and `others` sessions) was first chosen on test episodes; this chooses it
again on the train split alone. The train tasks are dealt into folds by a hash of the task id (as
`evaluate/agent_sources.py` deals them); for each agent × harness and fold k, the agent's fold-k
train sessions are replayed from the record at θ = 0.3 (use before write) with a flow learned by
each rule from the other folds only: the agent's own sessions there, its harness-mates' and other
harnesses'. Each agent is served by its own flows; rows pool every agent of an app. Utility is
input tokens per episode at the paper's costs for the app (β·saved − δ·detours). Every rule is
paired with the released default over the same tasks. The test split is never read.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

from stretto_core.cli.commands._load import load_for_verb
from stretto_core.evaluate.measure.bench_data import Corpus
from stretto_core.evaluate.measure.bootstrap import format_interval
from stretto_core.evaluate.measure.metrics import compare_speculators, costs_for, merge_results
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.site_calibration import DEFAULT_FOLDS, fold_key, folds_by_hash
from stretto_core.flow.harness import ALL, DEFAULT_MATES, DEFAULT_OTHERS, HarnessSplit, Weight, learn_split
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.agents import agent_key
from stretto_core.sessions.splits import make_split_file

RULES: tuple[tuple[Weight, Weight], ...] = (
    (0.0, 0.0), (ALL, 0.0), (ALL, 30.0), (ALL, 100.0), (ALL, 300.0), (ALL, ALL), (0.0, 100.0))
"""(harness-mates, other harnesses): own only, the released default (all / 100), pooled, and around them."""


def name(rule: tuple[Weight, Weight]) -> str:
    return "mates {} / others {}".format(*(w if w == ALL else f"{float(w):g}" for w in rule))


def cv_app(train: list, folds: int, theta: float) -> dict[str, list[ReplayResult]]:
    """Each rule's replays of every agent's held-out folds."""
    fold_of = folds_by_hash(sorted({fold_key(s) for s in train}), folds)
    pairs = sorted({(agent_key(s.header.agent_model), s.header.harness) for s in train})
    out: dict[str, list[ReplayResult]] = defaultdict(list)
    options = ReplayOptions(theta=theta, policy="use", split="all", processes=1)
    for agent, harness in pairs:
        for k in range(folds):
            held = [s for s in train if fold_of[fold_key(s)] == k and s.header.harness == harness
                    and agent_key(s.header.agent_model) == agent]
            if not held:
                continue
            rest = [s for s in train if fold_of[fold_key(s)] != k]
            own = [s for s in rest if s.header.harness == harness and agent_key(s.header.agent_model) == agent]
            mates = [s for s in rest if s.header.harness == harness and agent_key(s.header.agent_model) != agent]
            others = [s for s in rest if s.header.harness != harness]
            split = HarnessSplit(agent, harness, own, mates, others)
            played: dict[tuple[Weight, Weight], ReplayResult] = {}
            for rule in RULES:
                same = (rule[0] if mates else 0.0, rule[1] if others else 0.0)  # an empty body weighs nothing
                if not (own or any(same)):
                    continue  # nothing to learn this agent from by this rule: this rule leaves it out
                if same not in played:
                    flow = learn_split(split, mates=same[0], others=same[1])
                    played[same] = replay_sessions(FlowRuntime(flow), held, options)
                out[name(rule)].append(played[same])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--apps", default="tau2/airline,tau2/retail")
    parser.add_argument("--folds", type=int, default=DEFAULT_FOLDS)
    parser.add_argument("--theta", type=float, default=0.3)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    started = time.process_time()
    loaded = load_for_verb([args.sessions])
    corpus = Corpus("tau2", loaded, make_split_file([s.header for s in loaded]))
    default = name((DEFAULT_MATES, DEFAULT_OTHERS))
    rows = []
    print("| app | rule | episodes | saved | detours | turns saved | detours / episode | utility / episode (k) "
          "| − default: turns saved (points) | detours / episode | utility (k) |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for app in args.apps.split(","):
        train = corpus.on("train", app)
        if not train:
            raise SystemExit(f"no train sessions of {app} in {args.sessions}")
        costs = costs_for(app, None)
        by_rule = {r: merge_results(parts) for r, parts in cv_app(train, args.folds, args.theta).items()}
        base = by_rule[default]
        for rule, result in by_rule.items():
            c = compare_speculators(base, result, costs, draws=args.draws, a_label=default, b_label=rule)
            m, d = c.b, c.difference
            row = {"app": app, "rule": rule, "episodes": m.episodes, "saved": m.saved, "detours": m.detours,
                   "turns_saved": format_interval(m.turns_saved, 100, 1, "%"),
                   "detours_per_episode": format_interval(m.detours_per_episode, 1, 2),
                   "utility_k": format_interval(m.utility, 1e-3, 2),
                   "minus_default": {"turns_saved": format_interval(d.turns_saved, 100, 1, "", True),
                                     "detours_per_episode": format_interval(d.detours_per_episode, 1, 2, "", True),
                                     "utility_k": format_interval(d.utility, 1e-3, 2, "", True)},
                   "utility_point": None if m.utility is None else m.utility.point}
            rows.append(row)
            md = row["minus_default"]
            print(f"| {app} | {rule} | {m.episodes} | {m.saved} | {m.detours} | {row['turns_saved']} | "
                  f"{row['detours_per_episode']} | {row['utility_k']} | {md['turns_saved']} | "
                  f"{md['detours_per_episode']} | {md['utility_k']} |")
    print(f"\nθ = {args.theta}; {args.folds} task folds of the train split; 95% intervals from {args.draws} paired "
          f"bootstrap draws over tasks; the test split is not read. {time.process_time() - started:.0f} s CPU")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
