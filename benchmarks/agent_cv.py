"""Leave one agent out, across task folds, on an app's train split: the method a design decision is made by.

    python benchmarks/agent_cv.py --sessions DIR --app tau2/retail [--variants full,next] [--rules others,own,all]
        [--folds 5] [--draws 1000] [--json OUT]

DIR holds ingested sessions (`stretto ingest`); the split is the bench's (τ²-bench's official one).
For each train agent and each task fold (by a hash of the task id), the agent's sessions of the
fold are replayed from the record at θ = 0.3 with a flow learned, over the other folds only, from
the other agents' sessions (`others`: a new agent, the deployment's question), the agent's own
(`own`), or everyone's (`all`); `stretto_core/evaluate/agent_sources.py` says why both ways. The
test split is never read. Prints, per variant, rule and held-out agent (and all pooled), saved
turns and detours with 95% intervals from a bootstrap over tasks, then each rule against `others`
paired over the same tasks. To check a change, run it on both sides and compare the `others` rows.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from variant_diff import load_corpus
from stretto_core.evaluate.agent_sources import (ALL_AGENTS, CELL_HEADER, COMPARISON_HEADER, RULES, agent_cv,
                                                 agents_of, cell_line, comparison_line)
from stretto_core.evaluate.measure.bootstrap import format_interval
from stretto_core.evaluate.measure.metrics import compare_speculators, costs_for
from stretto_core.evaluate.site_calibration import DEFAULT_FOLDS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--variants", default="full,next", help="Variants (`full`: use before write; `next`: next step).")
    parser.add_argument("--rules", default=",".join(RULES), help="Whom a held-out agent learns from: others, own, all.")
    parser.add_argument("--folds", type=int, default=DEFAULT_FOLDS)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    started = time.process_time()
    train = load_corpus(args.sessions).on("train", args.app)
    if not train:
        raise SystemExit(f"no train sessions of {args.app} in {args.sessions}")
    variants, rules = args.variants.split(","), args.rules.split(",")
    agents = agents_of(train)
    print(f"{args.app}: {len(train)} train sessions of {len(agents)} agents ({', '.join(agents)}), "
          f"{len({s.header.task_id for s in train})} tasks, {args.folds} task folds; the test split is not read")
    replays = agent_cv(train, variants, rules, args.folds)
    cells = replays.cells(draws=args.draws)
    print("\n" + CELL_HEADER)
    for c in cells:
        print(cell_line(c))
    comparisons = [c for name in variants for rule in rules if rule != "others"
                   for agent in [*agents, ALL_AGENTS]
                   if (c := replays.compare(name, "others", rule, agent, draws=args.draws)) is not None]
    print("\n" + COMPARISON_HEADER)
    for c in comparisons:
        print(comparison_line(c))
    costs = costs_for(args.app, None)
    print(f"\neach variant − {variants[0]}, paired over the same tasks (all held-out agents; utility at the "
          f"{'paper' if costs else 'no'} costs of {args.app}, k tokens per episode)\n")
    print("| rule | variant | saved | detours | turns saved (points) | detours / episode | utility |\n"
          "|---|---|---:|---:|---:|---:|---:|")
    for rule in rules:
        base = replays.results.get((variants[0], rule, ALL_AGENTS))
        for name in variants[1:]:
            other = replays.results.get((name, rule, ALL_AGENTS))
            if base is None or other is None:
                continue
            d = compare_speculators(base, other, costs, draws=args.draws).difference
            print(f"| {rule} | {name} | {d.saved:+d} | {d.detours:+d} | {format_interval(d.turns_saved, 100, 1, '', True)} "
                  f"| {format_interval(d.detours_per_episode, 1, 2, '', True)} | "
                  f"{format_interval(d.utility, 1e-3, 2, '', True)} |")
    print(f"\n{time.process_time() - started:.0f} s CPU")
    if args.json is not None:
        args.json.write_text(json.dumps({"app": args.app, "folds": args.folds, "agents": agents,
                                         "cells": [c.model_dump() for c in cells],
                                         "comparisons": [c.model_dump() for c in comparisons]}, indent=1),
                             encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
