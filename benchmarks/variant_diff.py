"""Where two ablation variants part: the episodes whose saved turns differ, with each side's lookups.

    python benchmarks/variant_diff.py --sessions DIR --app agentdojo/travel --a full --b simple [--strict-stand-ins] [--json OUT]
    python benchmarks/variant_diff.py --sessions DIR --app agentdojo/banking --a full --b simple --cv [--weigh get_balance@get_iban]

Learns each test agent's flow from the train split as `stretto ablate` does, replays the test
episodes from the record at θ = 0.3 under both variants, and prints every episode whose saved
turns differ: each lookup with the response it rode on, its site, score = reach × ρ, and whether
it was used (U) and answered a call (A). The last line is the net difference in saved turns.

`--cv` asks the same of the train split alone, as `variant_cv.py --folds-by hash --learn-from
other-agents` measures it (the test split is not read): each held-out agent's sessions of a task
fold replayed with a flow learned from the other agents' sessions of the other folds. It is how
a design decision's parting episodes are read before the test split is. `--weigh TOOL@SITE`
(`*` for any) also prints, in the parting episodes, every candidate each variant weighed there:
its score and whether it was made and used, so a lookup one variant makes and the other does
not shows the other's score for it. `--site-use` ends with each (tool, site) where a candidate
variant `a` weighed was used: how many it weighed, made and saw used, and their mean score (a site
whose use rate clears θ while its scores do not is where `a` is too shy).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from stretto_core.cli.commands._load import load_for_verb
from stretto_core.evaluate.measure.ablation import assignments_for
from stretto_core.evaluate.measure.bench_data import Corpus
from stretto_core.evaluate.measure.metrics import merge_results, replay_each
from stretto_core.evaluate.replay.rows import ReplayResult, WeighedRow
from stretto_core.evaluate.replay.run import ReplayOptions
from stretto_core.evaluate.site_calibration import DEFAULT_FOLDS, cross_fit_parts, fold_key, folds_by_hash
from stretto_core.evaluate.variants import VariantFlows, variant
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.model import Session
from stretto_core.sessions.splits import make_split_file


def replay(corpus: Corpus, app: str, name: str, flows: VariantFlows, strict: bool, weigh: bool = False) -> ReplayResult:
    """The test split's episodes, each agent's flow learned from the train split (as `stretto ablate`)."""
    v = variant(name)
    options = ReplayOptions(theta=DEFAULT_THETA, policy=v.policy, split="test", strict_stand_ins=strict, weigh=weigh)
    return replay_each(assignments_for(corpus, app, v, flows), options)


def replay_cv(train: list[Session], name: str, flows: VariantFlows, strict: bool, weigh: bool = False,
              folds: int = DEFAULT_FOLDS) -> ReplayResult:
    """The train split's episodes, each agent's fold learned from the other agents' other folds."""
    v = variant(name)
    options = ReplayOptions(theta=DEFAULT_THETA, policy=v.policy, split="train", strict_stand_ins=strict,
                            weigh=weigh, processes=1)
    fold_of = folds_by_hash(sorted({fold_key(s) for s in train}), folds)
    results = []
    for k in range(folds):
        pairs: list[tuple[Any, list[Session]]] = [(flows.model(learn_from, v), held)
                                                  for learn_from, held in cross_fit_parts(train, fold_of, k, True)]
        if pairs:
            results.append(replay_each(pairs, options))
    return merge_results(results)


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


def weighed_by_episode(result: ReplayResult, where: str) -> dict[str, list[str]]:
    """The candidates weighed for TOOL at SITE (`where`, either `*`), one line each, by episode."""
    tool, _, site = where.partition("@")

    def wanted(w: WeighedRow) -> bool:
        return tool in ("*", w.tool) and site in ("*", w.site)

    out: dict[str, list[str]] = defaultdict(list)
    for w in filter(wanted, result.weighed_rows):
        mark = ("made" if w.made else "not made") + (", used" if w.used else "")
        out[w.session_id].append(f"weighed at decision {w.decision} (resp {w.response}) {w.tool} at {w.site}: "
                                 f"q {w.score_use:.2f} = {w.reach:.2f} × {w.binding:.2f}, {mark}")
    return out


def site_use(result: ReplayResult) -> list[str]:
    """Per (tool, site) with any use: candidates weighed, made, used, and their mean score."""
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])
    for w in result.weighed_rows:
        s = sums[(w.tool, w.site)]
        s[0], s[1], s[2], s[3] = s[0] + 1, s[1] + w.made, s[2] + w.used, s[3] + w.score_use
    ranked = sorted(((k, s) for k, s in sums.items() if s[2]), key=lambda ks: (-ks[1][2] / ks[1][0], ks[0]))
    return [f"{tool} at {site}: {n:.0f} weighed, {made:.0f} made, {used:.0f} used ({used / n:.2f}), "
            f"mean score {total / n:.2f}" for (tool, site), (n, made, used, total) in ranked]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--a", default="full")
    parser.add_argument("--b", default="simple")
    parser.add_argument("--strict-stand-ins", action="store_true")
    parser.add_argument("--cv", action="store_true", help="Train split, leaving one agent out across task folds.")
    parser.add_argument("--folds", type=int, default=DEFAULT_FOLDS)
    parser.add_argument("--weigh", default=None, metavar="TOOL@SITE", help="Also print candidates weighed there.")
    parser.add_argument("--site-use", action="store_true", help="Print variant a's use by (tool, site).")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if args.weigh is not None and "@" not in args.weigh:
        raise SystemExit(f"--weigh takes TOOL@SITE (either may be *), not {args.weigh!r}")
    corpus = load_corpus(args.sessions)
    flows, weigh = VariantFlows(), args.weigh is not None or args.site_use
    if args.cv:
        train = corpus.on("train", args.app)
        if not train:
            raise SystemExit(f"no train sessions of {args.app} in {args.sessions}")
        a, b = (replay_cv(train, n, flows, args.strict_stand_ins, weigh, args.folds) for n in (args.a, args.b))
    else:
        a, b = (replay(corpus, args.app, n, flows, args.strict_stand_ins, weigh) for n in (args.a, args.b))
    rows_b = {r.session_id: r for r in b.episode_rows}
    looks = {args.a: lookups_by_episode(a), args.b: lookups_by_episode(b)}
    weighed = ({args.a: weighed_by_episode(a, args.weigh), args.b: weighed_by_episode(b, args.weigh)}
               if args.weigh is not None else {})
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
            for line in weighed.get(name, {}).get(ra.session_id, []):
                print(f"    {name}: {line}")
    print(f"{args.a} {a.turns_saved} / {a.detours}, {args.b} {b.turns_saved} / {b.detours}; "
          f"{len(parted)} episodes part, net {net:+d} saved turns for {args.b}")
    if args.site_use:
        print(f"{args.a}'s candidates by (tool, site), where any was used:")
        for line in site_use(a):
            print("    " + line)
    if args.json is not None:
        args.json.write_text(json.dumps({"a": a.model_dump(), "b": b.model_dump(), "parted": parted}), encoding="utf-8")


if __name__ == "__main__":
    main()
