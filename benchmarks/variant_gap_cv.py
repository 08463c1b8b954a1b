"""Why one variant's used lookups are not another's, asked on the train split (leave one agent out).

    python benchmarks/variant_gap_cv.py --sessions DIR --app agentdojo/travel [--a full] [--b simple]
        [--folds 5] [--json OUT]

DIR holds ingested sessions (`stretto ingest`). As `benchmarks/agent_cv.py` does, each train agent's
sessions of each task fold are replayed from the record at θ = 0.3 with flows learned from the
other agents' sessions of the other folds (`evaluate/agent_sources.agent_folds`, rule `others`),
here with every candidate weighed. For each lookup `b` made and the agent used that `a` did not
make, `a`'s candidate for the same tool at the same response is looked up: the lookup is put
under the first reason that holds,

    a bound it elsewhere   a made this tool at this response with other arguments
    a's reach below        a weighed the tool there and its reach alone kept the score under θ
                           (reach · b's ρ < θ) while b's reach did not
    a's ρ below            a weighed it, with a reach that would clear θ at b's ρ
    a did not weigh        no candidate of a for this tool there (not bound, or not a read a
                           considers there)

and counted by (tool, site) with the mean reach and ρ of each side. The test split is never read.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from variant_diff import load_corpus
from stretto_core.evaluate.agent_sources import agent_folds
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.site_calibration import DEFAULT_FOLDS
from stretto_core.evaluate.variants import VariantFlows, variant


def key(row: Any) -> tuple[str, int, str, str]:
    return (row.session_id, row.response, row.tool, json.dumps(row.arguments, sort_keys=True, default=str))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--a", default="full")
    parser.add_argument("--b", default="simple")
    parser.add_argument("--theta", type=float, default=0.3)
    parser.add_argument("--folds", type=int, default=DEFAULT_FOLDS)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    started = time.process_time()
    train = load_corpus(args.sessions).on("train", args.app)
    flows = VariantFlows()
    totals = {args.a: Counter(), args.b: Counter()}
    gap: dict[tuple[str, str, str], list[tuple[float, float, float, float]]] = defaultdict(list)
    lost: Counter[tuple[str, str]] = Counter()
    for fold in agent_folds(train, args.folds):
        body = fold.learn_from.get("others")
        if not body:
            continue
        played = {}
        for name in (args.a, args.b):
            v = variant(name)
            options = ReplayOptions(theta=args.theta, policy=v.policy, split="all", processes=1, weigh=True)
            played[name] = replay_sessions(flows.model(body, v), fold.held, options)
            r = played[name]
            totals[name].update(saved=r.turns_saved, detours=r.detours, lookups=len(r.lookup_rows),
                                used=sum(1 for x in r.lookup_rows if x.used))
        a, b = played[args.a], played[args.b]
        made_a = {key(x): x for x in a.lookup_rows}
        tools_a = {(x.session_id, x.response, x.tool) for x in a.lookup_rows}
        weighed_a = {(w.session_id, w.response, w.tool): w for w in a.weighed_rows}
        for x in b.lookup_rows:
            if not x.used or key(x) in made_a:
                continue
            at = (x.session_id, x.response, x.tool)
            w = weighed_a.get(at)
            if at in tools_a:
                why = "a bound it elsewhere"
            elif w is None:
                why = "a did not weigh"
            elif w.reach * x.binding < args.theta <= x.reach * x.binding:
                why = "a's reach below"
            else:
                why = "a's ρ below"
            gap[(why, x.tool, x.site)].append((x.reach, x.binding, w.reach if w else float("nan"),
                                               w.binding if w else float("nan")))
        for x in a.lookup_rows:
            if x.used and key(x) not in {key(y) for y in b.lookup_rows}:
                lost[(x.tool, x.site)] += 1
    for name, t in totals.items():
        print(f"{name}: {t['saved']} saved, {t['detours']} detours, {t['lookups']} lookups ({t['used']} used)")
    print(f"\nused lookups of {args.b} that {args.a} did not make, by reason, tool and site "
          f"(mean reach · ρ of {args.b}, then of {args.a}'s candidate there)\n")
    print(f"| reason | tool | site | lookups | {args.b} reach · ρ | {args.a} reach · ρ |\n|---|---|---|---:|---:|---:|")
    rows = []
    for (why, tool, site), xs in sorted(gap.items(), key=lambda kv: -len(kv[1])):
        mean = [sum(v[i] for v in xs) / len(xs) for i in range(4)]
        rows.append({"reason": why, "tool": tool, "site": site, "lookups": len(xs), "b_reach": mean[0],
                     "b_rho": mean[1], "a_reach": mean[2], "a_rho": mean[3]})
        print(f"| {why} | {tool} | {site} | {len(xs)} | {mean[0]:.2f} · {mean[1]:.2f} | {mean[2]:.2f} · {mean[3]:.2f} |")
    print(f"\nused lookups of {args.a} that {args.b} did not make: {sum(lost.values())} "
          f"({', '.join(f'{t} at {s}: {n}' for (t, s), n in lost.most_common(6))})")
    print(f"\n{time.process_time() - started:.0f} s CPU; the test split is not read")
    if args.json is not None:
        args.json.write_text(json.dumps({"totals": totals, "gap": rows, "lost": [[t, s, n] for (t, s), n in
                                                                                lost.items()]}, indent=1))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
