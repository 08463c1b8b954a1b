"""Ablation variants replayed three ways: from the record (lenient and strict stand-ins) and in the environment.

    python benchmarks/variant_env.py --sessions DIR --apps agentdojo/travel,agentdojo/slack \
        --variants full,simple,next [--json OUT]

A record replay hands a lookup that answers nothing the nearest recorded result of the same tool
as a stand-in, and a later lookup may bind values from it (lenient, the default); strict rules
those lookups out. An environment replay runs every lookup in the benchmark's own environment, so
it is the referee: the rule whose savings (and whose lead of one variant over another) agree with
it is the honest one. Each test agent's flow is learned from the train split as `stretto ablate`
learns it; every replay is at θ = 0.3. Prints, per app and variant, saved turns / detours under
each replay and the share of episodes whose saved turns match the environment's, then the same
pooled over the apps, then each variant's lead over `full` under each replay.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from stretto_core.evaluate.measure.ablation import assignments_for
from stretto_core.evaluate.measure.bench_data import Corpus
from variant_diff import load_corpus
from stretto_core.evaluate.measure.metrics import replay_each
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.evaluate.replay.run import ReplayOptions
from stretto_core.evaluate.variants import VariantFlows, variant
from stretto_core.serve.speculator import DEFAULT_THETA

MODES = ("lenient", "strict", "env")


def replay(corpus: Corpus, app: str, name: str, flows: VariantFlows, mode: str) -> ReplayResult:
    v = variant(name)
    options = ReplayOptions(theta=DEFAULT_THETA, policy=v.policy, split="test",
                            strict_stand_ins=mode == "strict", env=mode == "env")
    return replay_each(assignments_for(corpus, app, v, flows), options)


def same_share(a: ReplayResult, env: ReplayResult) -> float:
    live = {r.session_id: r.turns_saved for r in env.episode_rows}
    rows = [r for r in a.episode_rows if r.session_id in live]
    return sum(r.turns_saved == live[r.session_id] for r in rows) / max(1, len(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--apps", required=True, help="comma-separated apps, e.g. agentdojo/travel")
    parser.add_argument("--variants", default="full,simple,next")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    corpus = load_corpus(args.sessions)
    flows = VariantFlows()
    apps, names = args.apps.split(","), args.variants.split(",")
    out: dict[str, dict[str, dict[str, dict]]] = {}
    totals = {n: {m: [0, 0] for m in MODES} for n in names}
    print("| App | Variant | Lenient record | Strict record | Environment | Same turns as env (lenient / strict) |")
    print("|---|---|---|---|---|---|")
    for app in apps:
        out[app] = {}
        for name in names:
            got = {m: replay(corpus, app, name, flows, m) for m in MODES}
            out[app][name] = {m: {"saved": r.turns_saved, "detours": r.detours,
                                  "episodes": {e.session_id: [e.turns_saved, e.detours] for e in r.episode_rows}}
                              for m, r in got.items()}
            for m, r in got.items():
                totals[name][m][0] += r.turns_saved
                totals[name][m][1] += r.detours
            cells = " | ".join(f"{got[m].turns_saved} / {got[m].detours}" for m in MODES)
            print(f"| {app} | {name} | {cells} | {same_share(got['lenient'], got['env']):.0%} / "
                  f"{same_share(got['strict'], got['env']):.0%} |", flush=True)
    for name in names:
        cells = " | ".join(f"{totals[name][m][0]} / {totals[name][m][1]}" for m in MODES)
        print(f"| pooled | {name} | {cells} | |")
    if "full" in names:
        for name in (n for n in names if n != "full"):
            leads = ", ".join(f"{m} {totals[name][m][0] - totals['full'][m][0]:+d}" for m in MODES)
            print(f"{name} − full, saved turns pooled: {leads}")
    if args.json is not None:
        args.json.write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    main()
