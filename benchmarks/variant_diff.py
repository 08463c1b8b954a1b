"""Where two ablation variants part: the episodes whose saved turns differ, with each side's lookups.

    python benchmarks/variant_diff.py --sessions DIR --app agentdojo/travel --a full --b simple [--strict-stand-ins] [--json OUT]

Learns each test agent's flow from the train split as `stretto ablate` does, replays the test
episodes from the record at θ = 0.3 under both variants, and prints every episode whose saved
turns differ: each lookup with the response it rode on, its site, score = reach × ρ, and whether
it was used (U) and answered a call (A). The last line is the net difference in saved turns.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from stretto_core.cli.commands._load import load_for_verb
from stretto_core.evaluate.measure.ablation import assignments_for
from stretto_core.evaluate.measure.bench_data import Corpus
from stretto_core.evaluate.measure.metrics import replay_each
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.evaluate.replay.run import ReplayOptions
from stretto_core.evaluate.variants import VariantFlows, variant
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.splits import make_split_file


def replay(corpus: Corpus, app: str, name: str, flows: VariantFlows, strict: bool) -> ReplayResult:
    v = variant(name)
    options = ReplayOptions(theta=DEFAULT_THETA, policy=v.policy, split="test", strict_stand_ins=strict)
    return replay_each(assignments_for(corpus, app, v, flows), options)


def load_corpus(sessions: Path) -> Corpus:
    """Every session under `sessions`, split as the bench splits them."""
    loaded = load_for_verb([sessions])
    return Corpus("sessions", loaded, make_split_file([s.header for s in loaded]))


def lookups_by_episode(result: ReplayResult) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for r in result.lookup_rows:
        mark = ("U" if r.used else "-") + ("A" if r.answered else "")
        out[r.session_id].append(f"resp {r.response:2} {r.tool} at {r.site}: q {r.score:.2f} = {r.reach:.2f} × "
                                 f"{r.binding:.2f} {mark} {json.dumps(r.arguments, default=str)[:80]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--a", default="full")
    parser.add_argument("--b", default="simple")
    parser.add_argument("--strict-stand-ins", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    corpus = load_corpus(args.sessions)
    flows = VariantFlows()
    a, b = (replay(corpus, args.app, n, flows, args.strict_stand_ins) for n in (args.a, args.b))
    rows_b = {r.session_id: r for r in b.episode_rows}
    looks = {args.a: lookups_by_episode(a), args.b: lookups_by_episode(b)}
    net, parted = 0, []
    for ra in a.episode_rows:
        rb = rows_b[ra.session_id]
        if ra.turns_saved == rb.turns_saved:
            continue
        net += rb.turns_saved - ra.turns_saved
        parted.append(ra.session_id)
        print(f"{ra.session_id}: {args.a} {ra.turns_saved} saved / {ra.detours} detours, "
              f"{args.b} {rb.turns_saved} / {rb.detours} (of {ra.ceiling_turns} ceiling turns)")
        for name in (args.a, args.b):
            for line in looks[name][ra.session_id]:
                print(f"    {name}: {line}")
    print(f"{args.a} {a.turns_saved} / {a.detours}, {args.b} {b.turns_saved} / {b.detours}; "
          f"{len(parted)} episodes part, net {net:+d} saved turns for {args.b}")
    if args.json is not None:
        args.json.write_text(json.dumps({"a": a.model_dump(), "b": b.model_dump(), "parted": parted}), encoding="utf-8")


if __name__ == "__main__":
    main()
