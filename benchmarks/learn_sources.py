"""Each train agent alone against all of them together, replayed on an app's test split (read once, to report).

    python benchmarks/learn_sources.py --sessions DIR --app tau2/retail [--variants full,next] [--draws 1000] [--json OUT]

DIR holds ingested sessions (`stretto ingest`); the split is the bench's (τ²-bench's official
one). A flow is learned from each train agent's sessions alone and from all train sessions
(`all`), and each is replayed from the record at θ = 0.3 on every test agent's episodes, with the
use-before-write speculator (`full`) and the next-step rule (`next`). Prints saved turns and
detours per body and test agent with 95% intervals from a bootstrap over tasks, then `all`
against each agent alone, paired over the same tasks. A test agent that is also a train agent was
seen by the flows that learned from it (on other tasks); the others were never seen. Choices are
made by `benchmarks/agent_cv.py` on the train split, never here.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from variant_diff import load_corpus
from stretto_core.evaluate.agent_sources import (ALL_AGENTS, CELL_HEADER, COMPARISON_HEADER, agents_of, cell_line,
                                                 comparison_line, replay_bodies, source_bodies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--variants", default="full,next", help="Variants (`full`: use before write; `next`: next step).")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    started = time.process_time()
    corpus = load_corpus(args.sessions)
    train, test = corpus.on("train", args.app), corpus.on("test", args.app)
    if not train or not test:
        raise SystemExit(f"{args.app} in {args.sessions} has {len(train)} train and {len(test)} test sessions; "
                         "both are needed")
    bodies = source_bodies(train)
    print(f"{args.app}: learned from " + ", ".join(f"{k} ({len(v)} train sessions)" for k, v in bodies.items())
          + f"; replayed on {len(test)} test sessions of " + ", ".join(agents_of(test)))
    variants = args.variants.split(",")
    replays = replay_bodies(bodies, test, variants)
    cells = replays.cells(draws=args.draws)
    print("\n" + CELL_HEADER)
    for c in cells:
        print(cell_line(c))
    comparisons = [c for name in variants for alone in bodies if alone != "all"
                   for agent in [*agents_of(test), ALL_AGENTS]
                   if (c := replays.compare(name, alone, "all", agent, draws=args.draws)) is not None]
    print("\n" + COMPARISON_HEADER)
    for c in comparisons:
        print(comparison_line(c))
    print(f"\n{time.process_time() - started:.0f} s CPU")
    if args.json is not None:
        args.json.write_text(json.dumps({"app": args.app, "bodies": {k: len(v) for k, v in bodies.items()},
                                         "cells": [c.model_dump() for c in cells],
                                         "comparisons": [c.model_dump() for c in comparisons]}, indent=1),
                             encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
