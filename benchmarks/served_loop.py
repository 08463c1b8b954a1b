"""Served-loop stability: learn → serve → learn again, ≥ 5 rounds, for each rule of what a served session teaches.

    python benchmarks/served_loop.py [--apps agentdojo/slack,agentdojo/travel,tau2/retail,tau2/airline]
        [--rules drop,all,holdout,used] [--rounds 5] [--split train] [--most N] [--json OUT]

For each app (τ²: each agent with sessions on the split apart, in recorded order; AgentDojo: the
suite's sessions of every pipeline, in a fixed hashed order), the sessions are cut into rounds+1
batches. Batch 0 is recorded; in each round the current flow serves the next batch by record
replay (the agent skips the calls lookups answered; `evaluate/served_loop.py` writes the session
a recorder would have) and the next flow learns from batch 0 and the served batches, each
session as the rule teaches it (`learn/served.py`). Each round's flow is scored on its batch
beside the reference: the flow learned once from the same sessions as recorded, unserved.
Prints per rule and round turns saved and detours, and whether every round stays within 10% of
the reference in both; writes every number to --json. Decisions are made on `--split train`
(the default); `--split test` reports.

Record replay only: serving in the real τ² environment re-runs each call in a fresh environment
per episode, too slow for this machine's two shared cores at 6 rules × 5 rounds (docs/promotion.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

from lifecycle_data import DEFAULT_CACHE, in_order, load_app
from stretto_core.evaluate.served_loop import REFERENCE, RoundScore, run_loop
from stretto_core.learn.served import RULES
from stretto_core.sessions.model import Session

WITHIN = 0.10


def deployments(app: str, split: str, cache: Path, most: int | None) -> dict[str, list[Session]]:
    """The sessions each deployment of the app sees, in arrival order."""
    sessions = load_app(app, cache).on(split, app=app)
    if app.startswith("agentdojo/"):
        ordered = sorted(sessions, key=lambda s: hashlib.sha1(s.session_id.encode()).hexdigest())
        return {"all pipelines": ordered[:most] if most else ordered}
    by_agent: dict[str, list[Session]] = {}
    for s in in_order(sessions):
        by_agent.setdefault(s.header.agent_model or "unknown", []).append(s)
    return {a: (ss[:most] if most else ss) for a, ss in sorted(by_agent.items()) if len(ss) >= 24}


def close(x: float, ref: float) -> bool:
    return abs(x - ref) <= WITHIN * ref if ref > 0 else x == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default="agentdojo/slack,agentdojo/travel,tau2/retail,tau2/airline")
    parser.add_argument("--rules", default=",".join(RULES))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--theta", type=float, default=0.3)
    parser.add_argument("--split", default="train", choices=("train", "test"))
    parser.add_argument("--most", type=int, default=None, help="At most this many sessions per deployment.")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    started = time.process_time()
    rules = args.rules.split(",")
    out: list[dict] = []
    summary: dict[str, dict[str, int]] = {r: {"stable": 0, "deployments": 0, "saved": 0, "detours": 0}
                                          for r in [REFERENCE, *rules]}
    for app in args.apps.split(","):
        for name, sessions in deployments(app, args.split, args.cache, args.most).items():
            if len(sessions) < args.rounds + 1:
                continue
            result = run_loop(sessions, rules, args.rounds, args.theta)
            ref = result.rounds_by_rule[REFERENCE]
            print(f"\n## {app}, {name}: {len(sessions)} {args.split} sessions, batches of {result.batch}, θ = {args.theta}")
            print("| rule | " + " | ".join(f"round {r + 1}" for r in range(args.rounds)) + " | saved | detours | every round within 10% |")
            print("|---|" + "---|" * (args.rounds + 3))
            for rule, scores in result.rounds_by_rule.items():
                cells = [f"{s.saved_share:.1%} · {s.detours_per_episode:.2f}" for s in scores]
                saved, detours = sum(s.saved for s in scores), sum(s.detours for s in scores)
                stable = all(close(s.saved, r.saved) and close(s.detours, r.detours) for s, r in zip(scores, ref))
                summary[rule]["saved"] += saved
                summary[rule]["detours"] += detours
                if rule != REFERENCE:
                    summary[rule]["deployments"] += 1
                    summary[rule]["stable"] += int(stable)
                print(f"| {rule} | " + " | ".join(cells) + f" | {saved} | {detours} | "
                      f"{'-' if rule == REFERENCE else ('yes' if stable else 'no')} |")
                out.append({"app": app, "deployment": name, "rule": rule, "split": args.split,
                            "rounds": [s.as_dict() for s in scores], "saved": saved, "detours": detours,
                            "stable": stable if rule != REFERENCE else None})
    ref = summary[REFERENCE]
    print("\n| rule | saved, all rounds | vs reference | detours | vs reference | deployments with every round within 10% |"
          "\n|---|---|---|---|---|---|")
    for rule, s in summary.items():
        ds = (s["saved"] - ref["saved"]) / ref["saved"] if ref["saved"] else 0.0
        dd = (s["detours"] - ref["detours"]) / ref["detours"] if ref["detours"] else 0.0
        stable = "-" if rule == REFERENCE else f"{s['stable']} of {s['deployments']}"
        print(f"| {rule} | {s['saved']} | {ds:+.1%} | {s['detours']} | {dd:+.1%} | {stable} |")
    chosen = min(rules, key=lambda r: max(abs(summary[r]["saved"] / max(ref["saved"], 1) - 1),
                                          abs(summary[r]["detours"] / max(ref["detours"], 1) - 1)))
    print(f"\nclosest to the reference in both (the larger of the two gaps): {chosen}"
          + ("" if args.split == "train" else " (test split: reported, not chosen by)"))
    print(f"\n{time.process_time() - started:.0f} s CPU")
    if args.json is not None:
        args.json.write_text(json.dumps({"split": args.split, "rounds": args.rounds, "theta": args.theta,
                                         "rows": out, "summary": summary}, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
