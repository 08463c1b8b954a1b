"""Do derived bindings add detours where exact bindings serve today? τ² and AgentDojo, train split only.

    .venv/bin/python benchmarks/mcp_bindings_replay.py [--apps tau2/retail,agentdojo/travel,...]
                                                       [--folds 2] [--sessions DIR] [--json mcp_bindings_replay.json]

Per app, the train split (τ²'s official one; AgentDojo's by hashed (suite, task), `sessions/splits.py`)
is cut into `--folds` folds by task; each fold is replayed from the record (`stretto replay`'s
rule, θ = 0.3) with a flow learned on the other folds, once as learned and once with every
derived count removed (the flow before derived bindings). Printed per app: turns saved, lookups
and detours of each, and the derived arguments the flows served. The test split is never read.
Fails when a fold's derived flow makes more detours than its plain one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

APPS = ("tau2/retail", "tau2/airline", "tau2/telecom", "agentdojo/banking", "agentdojo/slack",
        "agentdojo/travel", "agentdojo/workspace")


def without_derived(flow: Any) -> Any:
    """The flow with every derived count removed, its table compiled again."""
    plain = flow.model_copy(deep=True)
    for lookup in plain.bindings.lookups.values():
        for arg in lookup.args.values():
            arg.derived = None
    plain.table = None
    return plain.derive()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=",".join(APPS))
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--sessions", type=Path, help="Sessions already ingested (default: ingest STRETTO_DATA here).")
    parser.add_argument("--json", type=Path, default=Path("mcp_bindings_replay.json"))
    args = parser.parse_args()
    from stretto_core import learn_flow
    from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
    from stretto_core.paths import data_root
    from stretto_core.serve.runtime import FlowRuntime
    from stretto_core.sessions.ingest import ingest_files
    from stretto_core.sessions.splits import hash_draw, split_of
    from stretto_core.sessions.store import load_sessions

    wanted = [a for a in args.apps.split(",") if a]
    started = time.process_time()
    with tempfile.TemporaryDirectory(prefix="stretto-derived-replay-") as tmp:
        folder = args.sessions
        if folder is None:
            folder = Path(tmp)
            root = data_root()
            ingest_files("tau2", [root / "tau2" / "trajectories"], folder / "tau2")
            ingest_files("agentdojo", [root / "agentdojo" / "runs"], folder / "agentdojo")
        by_app: dict[str, list[Any]] = defaultdict(list)
        for session in load_sessions(folder):
            if session.header.app in wanted and split_of(session.header) == "train":
                by_app[session.header.app].append(session)
    if not by_app:
        raise SystemExit(f"no train-split sessions of {', '.join(wanted)}")
    rows: dict[str, Any] = {}
    worse = []
    for app in wanted:
        sessions = by_app.get(app, [])
        if not sessions:
            raise SystemExit(f"no train-split sessions of {app}")
        totals = {"derived": defaultdict(int), "plain": defaultdict(int)}
        served: set[str] = set()
        for fold in range(args.folds):
            def fold_of(s: Any) -> int:
                return int(hash_draw(app, s.header.task_id or s.header.session_id) * args.folds)
            held = [s for s in sessions if fold_of(s) == fold]
            learned = [s for s in sessions if fold_of(s) != fold]
            if not held or not learned:
                continue
            flow = learn_flow(learned, learned[0].header.manifest)
            served.update(f"{tool}.{a}: {at.template}" for tool, lk in flow.table.lookups.items()
                          for a, at in lk.args.items() if at.mode == "derived" and lk.kind == "bound")
            for name, variant in (("derived", flow), ("plain", without_derived(flow))):
                result = replay_sessions(FlowRuntime(variant), held, ReplayOptions(theta=0.3, processes=1))
                for key in ("episodes", "llm_turns", "turns_saved", "lookups", "detours", "used"):
                    totals[name][key] += getattr(result, key)
                if name == "plain" and result.detours < fold_detours:
                    worse.append(f"{app} fold {fold}: {fold_detours} detours with derived vs {result.detours} without")
                fold_detours = result.detours
        rows[app] = {"derived": dict(totals["derived"]), "plain": dict(totals["plain"]), "derived_served": sorted(served)}
        d, p = totals["derived"], totals["plain"]
        print(f"{app}: {d['episodes']} train episodes in {args.folds} folds; saved {p['turns_saved']} -> "
              f"{d['turns_saved']}, lookups {p['lookups']} -> {d['lookups']}, detours {p['detours']} -> {d['detours']}"
              f" (without -> with derived bindings)")
        for line in sorted(served):
            print(f"  derived: {line}")
    out = {"folds": args.folds, "split": "train", "apps": rows, "cpu_seconds": round(time.process_time() - started, 1)}
    args.json.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.json}")
    for line in worse:
        print("MORE DETOURS: " + line, file=sys.stderr)
    return 1 if worse else 0


if __name__ == "__main__":
    raise SystemExit(main())
