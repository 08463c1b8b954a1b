"""How many recorded sessions a compiled procedure needs: its learning curve on τ²-bench telecom solo.

    STRETTO_DATA=../shared/data python benchmarks/procedures_curve.py [--tasks 1,2,3,4] [--per-task 1,2,4]
        [--demo-tasks 1,2,4,8,18,37,74] [--seeds 3] [--variants base,full] [--cascade] [--demos DIR]
        [--json OUT]

Three curves, each point a procedure compiled and then run alone (no model) on the 40 test tasks
of the official split, in τ²-bench's real solo environment, scored by τ²-bench's reward:

- **recorded**: compiled from the recorded agents' successful solo sessions of training tasks, all
  the shared data has (gpt-4.1: 16 successful sessions of 4 tasks, 4 trials each): `k` of those
  tasks and `n` sessions of each, drawn at random per seed;
- **demonstrator, same tasks**: the written-workflow demonstrator
  (`procedures/tau2/demonstrator.py`, a hand-written program of the policy, not an agent) on the
  very tasks of each recorded point, one session each (it is deterministic: more would be copies);
- **demonstrator, more tasks**: the demonstrator on `k` training tasks drawn at random from the
  74, the ceiling: what the compiler does with perfect sessions as the tasks grow.

Each row: sessions and tasks compiled from, test tasks passed (mean over seeds, min–max),
hand-backs, missed failures (said resolved or transferred and scored 0), and `covered`: test tasks
whose issue and every fault some compiled-from task shares (a task id names its issue and faults;
a procedure cannot have learned a repair no session made, so `covered` bounds what it can pass).
`--variants` names the compilers compared, each point compiled by each: `full` (the default
compiler: writes gated by learned preconditions, fallback within the procedure) and `base` (the
compiler before them, `CompileOptions(preconditions=False, fallback=False)`); the options were
chosen on the train split by `benchmarks/procedures_cv.py`. `--cascade` adds the cascade on the hand-backs: its model is the same demonstrator's written
workflow as a scripted model (`WorkflowModel`), not an LLM, so its LLM turns per ticket count the
work the procedure took off a model, not a model's skill. The test split is read only to report.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from procedures_solo import APP, RECORDED_TRAIN, cached_demonstrations, trajectories
from stretto_core.paths import manifest_path
from stretto_core.procedures.compile import CompileOptions, compile_procedure
from stretto_core.procedures.episodes import Episode
from stretto_core.procedures.show import compiled_from
from stretto_core.procedures.sources import read_sessions, training_episodes
from stretto_core.procedures.tau2.env import telecom_tasks
from stretto_core.procedures.tau2.harness import training_task_ids
from stretto_core.procedures.tau2.measure import measure, summarize
from stretto_core.sessions.manifest import load_manifest
from stretto_core.sessions.splits import official_split

VARIANTS = {"base": CompileOptions(preconditions=False, fallback=False),
            "full": CompileOptions(preconditions=True, fallback=True),
            "full+ticket": CompileOptions(preconditions=True, ticket_preconditions=True, fallback=True),
            "full-any-precision": CompileOptions(preconditions=True, fallback=True, fallback_precision=0.0),
            "full-precision-0.8": CompileOptions(preconditions=True, fallback=True, fallback_precision=0.8),
            "no-fallback": CompileOptions(preconditions=True, fallback=False)}
"""The compilers compared: `full` is the default; `base` is the compiler before preconditions."""

TASK_ID = re.compile(r"^\[(?P<issue>[^\]]+)\](?P<faults>[^\[]*)")


def issue_and_faults(task_id: str) -> tuple[str, frozenset[str]]:
    """A τ² telecom task id's issue and its faults (`[mms_issue]a|b[PERSONA:Easy]`)."""
    m = TASK_ID.match(task_id)
    if m is None:
        return task_id, frozenset()
    return m["issue"], frozenset(f for f in m["faults"].split("|") if f)


def covered(test: list[str], learned: set[str]) -> int:
    """Test tasks whose issue was some learned task's and whose every fault some learned task had."""
    issues = {issue_and_faults(t)[0] for t in learned}
    faults = {f for t in learned for f in issue_and_faults(t)[1]}
    return sum(1 for t in test if issue_and_faults(t)[0] in issues and issue_and_faults(t)[1] <= faults)


def point(curve: str, episodes: list[Episode], test: list[str], cascade: bool,
          variant: str = "full") -> dict[str, Any]:
    """One compile, run on every test task: the summary a row needs."""
    import copy

    procedure = compile_procedure(copy.deepcopy(episodes), APP, VARIANTS[variant])
    alone, cascaded = measure(procedure, test, cascade=cascade)
    s = summarize(alone, cascaded)
    tasks = {e.task_id for e in episodes}
    return {"curve": curve, "variant": variant, "tasks": len(tasks), "sessions": len(episodes),
            "compiled_from": compiled_from(procedure),
            "passed": s.passed, "hand_back": s.verdicts.get("hand_back", 0), "missed": s.missed_failures,
            "covered": covered(test, tasks), "cascade_passed": s.cascade_passed,
            "llm_turns_per_ticket": s.llm_turns_per_ticket}


def recorded_by_task(path: Path) -> dict[str, list[Episode]]:
    tickets = telecom_tasks()
    episodes = training_episodes(read_sessions(results_paths=[path]), APP, lambda t: tickets[t].ticket)
    by_task: dict[str, list[Episode]] = defaultdict(list)
    for e in sorted(episodes, key=lambda e: e.session_id):
        by_task[e.task_id].append(e)
    return dict(sorted(by_task.items()))


def curves(args: argparse.Namespace) -> list[dict[str, Any]]:
    test = sorted(official_split("tau2", "telecom").test)
    recorded = recorded_by_task(trajectories() / RECORDED_TRAIN)
    manifest = load_manifest(manifest_path("tau2", "telecom"))
    train = sorted(training_task_ids())
    demo_sessions, _ = cached_demonstrations(args.demos, "train", train, manifest)
    tickets = telecom_tasks()
    demo = {e.task_id: e for e in training_episodes(demo_sessions, APP, lambda t: tickets[t].ticket)}
    print(f"recorded: {sum(map(len, recorded.values()))} successful solo sessions of {len(recorded)} training "
          f"tasks; demonstrator: successful on {len(demo)} of {len(train)} training tasks", flush=True)
    rows: list[dict[str, Any]] = []
    for k in args.tasks:
        for n in args.per_task:
            if k > len(recorded) or n > max(map(len, recorded.values())):
                continue
            seeds = 1 if k == len(recorded) and n == max(map(len, recorded.values())) else args.seeds
            for seed in range(seeds):
                rng = random.Random(f"{k}-{n}-{seed}")
                chosen = sorted(rng.sample(sorted(recorded), k))
                episodes = [e for t in chosen for e in sorted(rng.sample(recorded[t], min(n, len(recorded[t]))),
                                                               key=lambda e: e.session_id)]
                same = [demo[t] for t in chosen if t in demo]
                for variant in args.variants:
                    rows.append(dict(point("recorded", episodes, test, args.cascade, variant), per_task=n, seed=seed))
                    print(f"  recorded k={k} n={n} seed={seed} {variant}: {rows[-1]['passed']}/40", flush=True)
                    if n == args.per_task[0] and same:
                        rows.append(dict(point("demonstrator, same tasks", same, test, args.cascade, variant),
                                         per_task=1, seed=seed))
    for k in args.demo_tasks:
        seeds = 1 if k >= len(train) else args.seeds
        for seed in range(seeds):
            chosen = sorted(random.Random(f"demo-{k}-{seed}").sample(train, min(k, len(train))))
            episodes = [demo[t] for t in chosen if t in demo]
            if not episodes:
                continue
            for variant in args.variants:
                rows.append(dict(point("demonstrator, more tasks", episodes, test, args.cascade, variant),
                                 per_task=1, seed=seed))
                print(f"  demonstrator k={k} seed={seed} {variant}: {rows[-1]['passed']}/40", flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """Rows pooled over seeds: mean passed (min–max) and the rest as means."""
    groups: dict[tuple[str, int, int, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["curve"], r["tasks"], r["per_task"], r.get("variant", "full"))].append(r)
    lines = ["| compiled from | tasks | sessions per task | compiler | sessions | seeds | passed of 40 (min–max) "
             "| hand-backs | missed | covered | cascade passed | LLM turns per ticket |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (curve, tasks, per_task, variant), rs in groups.items():
        passed = [r["passed"] for r in rs]
        mean = lambda key: statistics.fmean(r[key] for r in rs)  # noqa: E731
        cascade = "—" if rs[0]["cascade_passed"] is None else f"{mean('cascade_passed'):.1f}"
        turns = "—" if rs[0]["llm_turns_per_ticket"] is None else f"{mean('llm_turns_per_ticket'):.2f}"
        lines.append(f"| {curve} | {tasks} | {per_task} | {variant} | {mean('sessions'):.0f} | {len(rs)} | "
                     f"{statistics.fmean(passed):.1f} ({min(passed)}–{max(passed)}) | {mean('hand_back'):.1f} | "
                     f"{mean('missed'):.1f} | {mean('covered'):.1f} | {cascade} | {turns} |")
    return "\n".join(lines)


def numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def build_parser() -> argparse.ArgumentParser:
    """The command line (a test parses the commands the docs give with it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=numbers, default=[1, 2, 3, 4], help="Recorded training tasks per point.")
    parser.add_argument("--per-task", type=numbers, default=[1, 2, 4], help="Recorded sessions of each task.")
    parser.add_argument("--demo-tasks", type=numbers, default=[1, 2, 4, 8, 18, 37, 74],
                        help="Training tasks the demonstrator's ceiling curve compiles from.")
    parser.add_argument("--seeds", type=int, default=3, help="Random draws per point (one where all are taken).")
    parser.add_argument("--variants", type=lambda v: v.split(","), default=["full"],
                        help="Compilers compared at every point: full (the default compiler), base (before "
                             "preconditions and fallback), full+ticket.")
    parser.add_argument("--cascade", action="store_true", help="Also run the cascade (its model: the written "
                                                               "workflow, scripted) on the hand-backs.")
    parser.add_argument("--demos", type=Path, default=None, help="Keep (and reuse) the demonstrations here.")
    parser.add_argument("--json", type=Path, default=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant {unknown[0]!r}; known: {', '.join(VARIANTS)}")
    started = time.process_time()
    rows = curves(args)
    if not rows:
        raise SystemExit("no point was compiled: check --tasks, --per-task and the data under STRETTO_DATA")
    print("\nτ²-bench telecom solo, 40 test tasks of the official split, each procedure alone (no model)"
          + ("; cascade model: the written workflow, scripted (not an LLM)" if args.cascade else "") + "\n")
    print(table(rows))
    print(f"\n{time.process_time() - started:.0f} s CPU")
    if args.json is not None:
        args.json.write_text(json.dumps({"rows": rows}, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
