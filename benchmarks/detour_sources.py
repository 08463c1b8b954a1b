"""Where a domain's detours come from: the lookups of one ablation variant by tool, site, source and class.

    python benchmarks/detour_sources.py --sessions DIR --app tau2/retail [--variant full] [--json OUT]

Learns each test agent's flow from the train split as `stretto ablate` does, replays the test
episodes from the record at θ = 0.3, and counts each lookup made under (looked-up tool, site,
binding source, mention class of the lead argument's pick): lookups, used, detours, mean score.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from variant_diff import load_corpus
from stretto_core.evaluate.measure.ablation import assignments_for
from stretto_core.evaluate.measure.metrics import replay_each
from stretto_core.evaluate.replay.run import ReplayOptions
from stretto_core.evaluate.site_calibration import NotedBindings
from stretto_core.evaluate.variants import VariantFlows, variant
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.state import call_key


def sources_and_class(tool: str, site: str, state: Any, got: Any) -> tuple[str, str]:
    """What a lookup is grouped by beside its tool and site: its sources and the lead's class."""
    return " & ".join(got.sources) or "(no argument)", getattr(got, "mention", "plain")


def replay_arguments(doc: str) -> argparse.Namespace:
    """The arguments of a benchmark that replays one app's test split with one variant."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--variant", default="full")
    parser.add_argument("--theta", type=float, default=DEFAULT_THETA)
    parser.add_argument("--json", type=Path, default=None)
    return parser.parse_args()


def main() -> None:
    args = replay_arguments(__doc__)
    corpus = load_corpus(args.sessions)
    v = variant(args.variant)
    assignments = [(NotedBindings(model, sources_and_class), episodes) for model, episodes in assignments_for(corpus, args.app, v, VariantFlows())]
    result = replay_each(assignments, ReplayOptions(theta=args.theta, policy=v.policy, split="test", processes=1))
    seen = {k: got for model, _ in assignments for k, got in model.seen.items()}
    groups: dict[tuple[str, str, str, str], list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])
    for row in result.lookup_rows:
        source, mention = seen.get((call_key(row.tool, row.arguments), row.site), ("?", "?"))
        g = groups[(row.tool, row.site, source, mention)]
        g[0] += 1
        g[1] += row.used
        g[2] += row.detour
        g[3] += row.score
    print(f"{args.app}, {args.variant}: {result.episodes} episodes, {result.turns_saved} turns saved of "
          f"{result.ceiling_turns} in the ceiling, {result.detours} detours ({result.detours / max(1, result.episodes):.2f} "
          f"per episode), {result.lookups} lookups\n")
    print("| Lookups | Used | Detours | Mean score | Tool | Site | Source | Class |\n|---:|---:|---:|---:|---|---|---|---|")
    rows = sorted(groups.items(), key=lambda kv: (-kv[1][2], -kv[1][0]))
    for (tool, site, source, mention), (n, used, detours, score) in rows:
        print(f"| {n:.0f} | {used:.0f} | {detours:.0f} | {score / n:.2f} | {tool} | {site} | {source} | {mention} |")
    if args.json is not None:
        args.json.write_text(json.dumps([{"tool": k[0], "site": k[1], "source": k[2], "class": k[3], "lookups": g[0],
                                          "used": g[1], "detours": g[2], "mean_score": g[3] / g[0]}
                                         for k, g in rows], indent=1), encoding="utf-8")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
