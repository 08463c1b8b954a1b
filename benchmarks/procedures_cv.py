"""How the procedure compiler's options generalize, chosen on τ²-bench telecom's train split alone.

    STRETTO_DATA=../shared/data python benchmarks/procedures_cv.py [--variants base,preconditions,full]
        [--demo-folds 5] [--demo-k 8,18] [--seeds 2] [--no-cascade] [--demos DIR] [--json OUT]

No test task is read. Every point compiles a procedure and runs it alone (no model) in τ²-bench's
real solo environment on training tasks it was not compiled from, scored by τ²-bench's reward:

- **recorded, leave one task out**: compiled from the recorded agents' successful sessions (gpt-4.1,
  16 sessions of 4 training tasks) of three tasks, run on the fourth (its faults were each repaired
  in some other task, never together): the question "does it generalize from few real sessions";
- **recorded → other train tasks**: compiled from all 16, run on the 70 training tasks no recorded
  session is of (none is covered by the 4 tasks' repairs, so what counts is safety: failures it
  called resolved, and, with the cascade, what the procedure took off the model and whether the
  model could still finish);
- **demonstrator, CV over tasks**: the hand-written demonstrator's sessions (a program of the
  written policy, not an agent: the ceiling) of k training tasks, run on the other training tasks
  (k-fold, and random draws of k tasks).

Variants: `base` (no preconditions, no fallback: the compiler before), `preconditions` (a write is
made only where its training states' features hold), `full` (also falls back within the
procedure). The cascade's model is the demonstrator's written workflow, scripted, not an LLM.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from procedures_curve import VARIANTS, numbers, recorded_by_task
from procedures_solo import APP, RECORDED_TRAIN, cached_demonstrations, trajectories
from stretto_core.paths import manifest_path
from stretto_core.procedures.compile import CompileOptions, compile_procedure
from stretto_core.procedures.episodes import Episode
from stretto_core.procedures.sources import training_episodes
from stretto_core.procedures.tau2.env import telecom_tasks
from stretto_core.procedures.tau2.harness import training_task_ids
from stretto_core.procedures.tau2.measure import measure
from stretto_core.sessions.manifest import load_manifest

def run_point(episodes: list[Episode], tasks: list[str], options: CompileOptions, cascade: bool) -> dict[str, Any]:
    """Compile from the episodes with these options; run on the tasks; count what happened."""
    procedure = compile_procedure([_copy(e) for e in episodes], APP, options)
    alone, cascaded = measure(procedure, tasks, cascade=cascade)
    out: dict[str, Any] = {
        "tasks": len(tasks), "passed": sum(r.reward.reward >= 1 for r in alone),
        "hand_back": sum(r.verdict == "hand_back" for r in alone),
        "missed": sum(r.verdict != "hand_back" and r.reward.reward < 1 for r in alone),
        "calls": sum(len(r.calls) for r in alone)}
    if cascaded is not None:
        out["cascade_passed"] = sum(r.reward.reward >= 1 for r in cascaded)
        out["llm_turns"] = sum(r.llm_turns for r in cascaded)
    return out


def _copy(e: Episode) -> Episode:
    """A fresh copy: compiling writes action keys into the steps."""
    import copy

    return copy.deepcopy(e)


def _add(total: dict[str, Any], part: dict[str, Any]) -> None:
    for key, value in part.items():
        total[key] = total.get(key, 0) + value


def evaluate(args: argparse.Namespace) -> list[dict[str, Any]]:
    recorded = recorded_by_task(trajectories() / RECORDED_TRAIN)
    train = sorted(training_task_ids())
    manifest = load_manifest(manifest_path("tau2", "telecom"))
    tickets = telecom_tasks()
    demo_sessions, _ = cached_demonstrations(args.demos, "train", train, manifest)
    demo = {e.task_id: e for e in training_episodes(demo_sessions, APP, lambda t: tickets[t].ticket)}
    rows: list[dict[str, Any]] = []
    for name in args.variants:
        options = VARIANTS[name]
        started = time.process_time()
        loto: dict[str, Any] = {}
        for held in recorded:
            _add(loto, run_point([e for t, es in recorded.items() if t != held for e in es], [held], options,
                                 args.cascade))
        rows.append(dict(loto, variant=name, point="recorded, leave one task out (3 tasks → the 4th)"))
        loto1: dict[str, Any] = {}
        for seed in range(args.seeds):
            rng = random.Random(f"one-{seed}")
            for held in recorded:
                chosen = [rng.choice(es) for t, es in recorded.items() if t != held]
                _add(loto1, run_point(chosen, [held], options, args.cascade))
        rows.append(dict(loto1, variant=name, point=f"recorded, 1 session per task, leave one task out ×{args.seeds}"))
        others = [t for t in train if t not in recorded]
        rows.append(dict(run_point([e for es in recorded.values() for e in es], others, options, args.cascade),
                         variant=name, point="recorded (16 sessions) → the 70 other train tasks"))
        if args.demo_folds:
            folds: dict[str, Any] = {}
            order = sorted(demo, key=lambda t: random.Random(f"fold-{t}").random())
            for fold in range(args.demo_folds):
                held = [t for i, t in enumerate(order) if i % args.demo_folds == fold]
                _add(folds, run_point([demo[t] for t in order if t not in held], held, options, args.cascade))
            rows.append(dict(folds, variant=name, point=f"demonstrator, {args.demo_folds}-fold CV over train tasks"))
        for k in args.demo_k:
            part: dict[str, Any] = {}
            for seed in range(args.seeds):
                chosen = sorted(random.Random(f"demo-{k}-{seed}").sample(sorted(demo), k))
                held = sorted(random.Random(f"held-{k}-{seed}").sample([t for t in demo if t not in chosen],
                                                                       args.held))
                _add(part, run_point([demo[t] for t in chosen], held, options, args.cascade))
            rows.append(dict(part, variant=name, point=f"demonstrator, {k} train tasks → {args.held} others ×{args.seeds}"))
        print(f"  {name}: {time.process_time() - started:.0f} s CPU", flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| point | variant | runs | passed | hand-backs | missed failures | calls | cascade passed "
             "| LLM turns |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: r["point"]):
        lines.append(f"| {r['point']} | {r['variant']} | {r['tasks']} | {r['passed']} | {r['hand_back']} | "
                     f"{r['missed']} | {r['calls']} | {r.get('cascade_passed', '—')} | {r.get('llm_turns', '—')} |")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line (a test parses the commands the docs give with it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variants", type=lambda s: s.split(","), default=list(VARIANTS),
                        help=f"Compilers compared (comma-separated): {', '.join(VARIANTS)}.")
    parser.add_argument("--demo-folds", type=int, default=5, help="Folds of the demonstrator's CV (0: none).")
    parser.add_argument("--demo-k", type=numbers, default=[8, 18], help="Train tasks of the demonstrator's draws.")
    parser.add_argument("--held", type=int, default=20, help="Held-out train tasks of each draw.")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--no-cascade", dest="cascade", action="store_false")
    parser.add_argument("--demos", type=Path, default=None, help="Keep (and reuse) the demonstrations here.")
    parser.add_argument("--json", type=Path, default=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant {unknown[0]!r}; known: {', '.join(VARIANTS)}")
    rows = evaluate(args)
    print("\nτ²-bench telecom solo, train split only (no test task read); each procedure alone, "
          "cascade model: the written workflow, scripted (not an LLM)\n")
    print(table(rows))
    if args.json is not None:
        args.json.write_text(json.dumps({"rows": rows}, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
