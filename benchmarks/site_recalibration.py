"""Each site's score recalibrated on the use counted there (the paper's Appendix B), learned from train only.

    python benchmarks/site_recalibration.py --sessions DIR --app tau2/retail [--priors 10,40,100] [--floors 0,0.1] [--json OUT]

Each test agent's flow is learned from the train split as `stretto ablate` learns it, and its
sites calibrated as `stretto learn --recalibrate` calibrates them (`evaluate/site_calibration.py`:
the same train sessions dealt into 5 folds by task, each fold replayed with every candidate
weighed by a flow learned from the other agents' sessions of the other folds). A site is (looked-up
tool, the tool whose result the lookup rides on, binding source, mention class of the lead's pick),
as `detour_sources.py` groups lookups; its factor on ρ is f = (U + P·q̄) / (Q + P·q̄) over the
candidates scored at least the floor.

The test split is then replayed from the record at θ = 0.3 as Table 3 does, with the flow as
learned and with its sites recalibrated at each floor and prior P. Prints the sites' counts and
factors at the first floor (summed over the test agents' calibrations), then saved turns / ceiling
and detours per floor and prior.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from variant_diff import load_corpus
from stretto_core.evaluate.measure.bench_plan import agent_key, learning_sessions
from stretto_core.evaluate.measure.metrics import replay_each
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.evaluate.replay.run import ReplayOptions
from stretto_core.evaluate.site_calibration import count_sites, cross_fit
from stretto_core.evaluate.variants import VariantFlows, learn_for, model_for, variant
from stretto_core.flow.site_calibration import SiteCalibration, add_counts
from stretto_core.serve.speculator import DEFAULT_THETA


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--priors", default="10,40,100")
    parser.add_argument("--floors", default="0.1,0")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    corpus, flows, full, recal = load_corpus(args.sessions), VariantFlows(), variant("full"), variant("recalibrated")
    priors = [float(p) for p in args.priors.split(",")]
    floors = [float(f) for f in args.floors.split(",")]
    by_agent: dict[str, list] = {}
    for s in corpus.on("test", args.app):
        by_agent.setdefault(agent_key(s.header.agent_model), []).append(s)
    agents = []
    for agent in sorted(by_agent):
        sessions, _, _ = learning_sessions(corpus, args.app, agent)
        if sessions:
            weighed = cross_fit(sessions, lambda part: learn_for(part, full), model_of=lambda f: model_for(f, full))
            agents.append((flows.flow(sessions, full), weighed, prepare_sessions(by_agent[agent])))
    summed = SiteCalibration(floor=floors[0], sites=add_counts(*(count_sites(w, floors[0]) for _, w, _ in agents)))
    print(f"{args.app}: sites counted by cross-fitting the train sessions of {len(agents)} test agents "
          f"(floor {floors[0]:g})\n")
    print("| Weighed | Used | Mean score | " + " | ".join(f"f (P={p:g})" for p in priors)
          + " | Tool | Site | Source | Class |\n|---:|---:|---:|" + "---:|" * len(priors) + "---|---|---|---|")
    for c in sorted(summed.sites, key=lambda c: -c.weighed):
        if c.weighed >= 5:
            print(f"| {c.weighed:.0f} | {c.used / c.weighed:.2f} | {c.score / c.weighed:.2f} | "
                  + " | ".join(f"{c.factor(p):.2f}" for p in priors) + " | " + " | ".join(c.key) + " |")
    options = ReplayOptions(theta=DEFAULT_THETA, split="test", processes=1)
    rows = []
    for floor, prior in [(None, None)] + [(f, p) for f in floors for p in priors]:
        pairs = []
        for flow, weighed, episodes in agents:
            cal = None if prior is None else SiteCalibration(prior=prior, floor=floor, sites=count_sites(weighed, floor))
            pairs.append((model_for(flow.model_copy(update={"site_calibration": cal}), recal), episodes))
        result = replay_each(pairs, options)
        rows.append({"floor": floor, "prior": prior, "episodes": result.episodes, "saved": result.turns_saved,
                     "ceiling": result.ceiling_turns, "detours": result.detours, "lookups": result.lookups})
    print(f"\n{args.app}, test split at θ = {DEFAULT_THETA}:\n\n| Recalibration | Saved / ceiling | Share | Detours "
          "| Detours / ep. | Lookups |\n|---|---:|---:|---:|---:|---:|")
    for r in rows:
        name = ("none (the flow as learned)" if r["prior"] is None
                else f"per site, floor {r['floor']:g}, prior {r['prior']:g}")
        print(f"| {name} | {r['saved']} / {r['ceiling']} | {r['saved'] / max(1, r['ceiling']):.1%} | {r['detours']} "
              f"| {r['detours'] / max(1, r['episodes']):.2f} | {r['lookups']} |")
    if args.json is not None:
        args.json.write_text(json.dumps({"app": args.app, "sites": summed.model_dump(mode="json"), "test": rows},
                                        indent=1), encoding="utf-8")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
