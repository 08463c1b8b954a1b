"""Stay out of what does not pay: the posterior of use as the speculator's score, on the train split.

    python benchmarks/stay_out.py [--apps tau2/airline,tau2/retail,agentdojo/slack,agentdojo/travel,
        agentdojo/banking,agentdojo/workspace] [--split train|test] [--choose] [--json OUT]

Per app, each agent in turn is the deployment's (leave one agent out): its flow is learned from
the other agents' sessions. Each agent's sessions are dealt into two task folds by a hash of the
task; the deployment's own evidence is the weighed candidates of one fold (what `stretto flow
promote` counts on its clean sessions) and the other fold is replayed from the record at θ = 0.3
(then the folds swap). The train evidence of an agent's flow is the other agents' weighed
candidates, each agent weighed by the flow learned without it (a shortcut: that flow learned from
the held-out agent's sessions too; the held-out agent's own use never enters).

Arms: `none` (the flow as learned), `binary` (the posterior bar of `flow promote` before this
change: a site lookup with (used + 3·q̄)/(lookups + 3) < θ* makes no lookup) and `f P Pg T` (the
score times f_k of `flow/use_evidence.py`, prior P at a key, P_g for the agent's back-off, train
evidence in (T = 1) or not). Utility = saved − θ/(1−θ)·detours (the costs θ = 0.3 stands for).
`--choose` prints the grid on the train split; the chosen arm is read on `--split test` once.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections import defaultdict
from dataclasses import replace as dc_replace
from pathlib import Path
from typing import Any, Sequence

from lifecycle_data import DEFAULT_CACHE, load_app
from stretto_core.evaluate.promotion import promotion_of, tally_sites, weighed_candidates, would_be_lookups
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow.ir import Flow, learn
from stretto_core.flow.use_evidence import EvidenceKey, UseEvidence, count_use, evidence_key
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import Session
from stretto_core.sessions.state import call_key

APPS = "tau2/airline,tau2/retail,agentdojo/slack,agentdojo/travel,agentdojo/banking,agentdojo/workspace"
THETA = 0.3
MIN_SESSIONS = 4
GRID = [(p, pg, t, h) for h in (0, 1) for t in (0, 1) for p in (3.0, 10.0, 40.0) for pg in (3.0, 10.0, 40.0, float("inf"))]
"""The whole grid (`--choose`); `--grid small` runs the neighbourhood of the chosen arm."""
SMALL_GRID = [(3.0, pg, 1, h) for h in (0, 1) for pg in (10.0, 40.0)] + [(3.0, 10.0, 0, 0), (10.0, 10.0, 1, 0)]
CHOSEN = (3.0, 40.0, 1, 0)


def agent_of(s: Session) -> str:
    return s.header.agent_model or s.header.labels.get("pipeline", "unknown")


def fold_of(s: Session) -> int:
    return int(hashlib.sha1((s.header.task_id or s.session_id).encode()).hexdigest(), 16) % 2


class Scaled:
    """A flow model whose bindings' ρ are multiplied by f_k (`flow/use_evidence.py`); notes each key."""

    def __init__(self, model: Any, factors: dict[EvidenceKey, float], default: float,
                 held: frozenset[EvidenceKey] = frozenset()) -> None:
        self.model, self.factors, self.default, self.held = model, factors, default, held
        self.seen: dict[tuple[str, str], EvidenceKey] = {}

    def bind(self, tool: str, state: Any, site: str) -> Any:
        got = self.model.bind(tool, state, site)
        if got is None:
            return None
        key = evidence_key(tool, site, got)
        if key in self.held:
            return None
        self.seen[(call_key(tool, got.arguments), site)] = key
        f = self.factors.get(key, self.default)
        return got if f == 1.0 else dc_replace(got, rho=got.rho * f)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)


def weighed(flow: Flow, sessions: Sequence[Session]) -> list[tuple[EvidenceKey, float, bool]]:
    """Every candidate weighed replaying `sessions` with `flow`: (key, score, used), as `flow promote` counts them."""
    return [(key, score, used) for key, score, used, _ in weighed_candidates(flow, sessions, THETA)]


def measure(model: Any, sessions: Sequence[Session]) -> dict[str, float]:
    noted = model if isinstance(model, Scaled) else Scaled(model, {}, 1.0)
    result = replay_sessions(noted, list(sessions), ReplayOptions(theta=THETA, processes=1))
    other = [r for r in result.lookup_rows if noted.seen.get((call_key(r.tool, r.arguments), r.site), ("", "", ""))[2]
             == "named_other"]
    return {"episodes": result.episodes, "llm_turns": result.llm_turns, "ceiling": result.ceiling_turns,
            "saved": result.turns_saved, "detours": result.detours, "lookups": result.lookups,
            "named_other": len(other), "named_other_used": sum(1 for r in other if r.used)}


def arm_name(p: float, pg: float, t: int, h: int) -> str:
    return f"f P={p:g} Pg={pg:g} T={t}" + (" hold" if h else "")


def run_app(app: str, split: str, grid: Sequence[tuple[float, float, int]], cache: Path) -> dict[str, Any]:
    corpus = load_app(app, cache)
    train = corpus.on("train", app=app)
    replayed = corpus.on(split, app=app)
    agents = sorted(a for a in {agent_of(s) for s in replayed}
                    if sum(agent_of(s) == a for s in replayed) >= MIN_SESSIONS and any(agent_of(s) != a for s in train))
    flows = {a: learn([s for s in train if agent_of(s) != a]) for a in agents}
    train_agents = sorted({agent_of(s) for s in train})
    own_rows: dict[str, list[list[tuple[EvidenceKey, float, bool]]]] = {}
    for a in set(agents) | set(train_agents):
        flow = flows.get(a) or learn([s for s in train if agent_of(s) != a] or train)
        mine = [s for s in train if agent_of(s) == a]
        own_rows[a] = [weighed(flow, [s for s in mine if fold_of(s) == k]) for k in (0, 1)]
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    per_agent: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(float)))
    for a in agents:
        runtime = FlowRuntime(flows[a])
        train_counts = count_use([r for b in train_agents if b != a for rows in own_rows[b] for r in rows], "train")
        mine = [s for s in replayed if agent_of(s) == a]
        own_train = [s for s in train if agent_of(s) == a]
        plan = ([([s for s in mine if fold_of(s) != k], [s for s in own_train if fold_of(s) == k], own_rows[a][k])
                 for k in (0, 1)] if split == "train" else
                [(mine, own_train, own_rows[a][0] + own_rows[a][1])])
        for target, evidence_sessions, rows in plan:
            if not target:
                continue
            own_counts = count_use(rows, "own")
            results = {"none": measure(runtime, target)}
            old = promotion_of(tally_sites(would_be_lookups(flows[a], evidence_sessions, THETA)), "posterior", THETA, 3.0,
                               len(evidence_sessions))
            binary = flows[a].model_copy(update={"promotion": old})
            results["binary"] = measure(FlowRuntime(binary), target)
            for p, pg, t, h in grid:
                ev = UseEvidence(site_prior=p, agent_prior=pg if pg != float("inf") else 1e12,
                                 counts=own_counts + (train_counts if t else []))
                factors, g = ev.factors()
                held = ev.held(THETA) if h else frozenset()
                results[arm_name(p, pg, t, h)] = measure(Scaled(runtime, factors, g, held), target)
            for arm, sc in results.items():
                for key, v in sc.items():
                    totals[arm][key] += v
                    per_agent[a][arm][key] += v
    return {"agents": agents, "totals": {k: dict(v) for k, v in totals.items()},
            "per_agent": {a: {arm: dict(v) for arm, v in arms.items()} for a, arms in per_agent.items()}}


def utility(t: dict[str, float]) -> float:
    return t["saved"] - THETA / (1 - THETA) * t["detours"]


def print_app(app: str, got: dict[str, Any], arms: Sequence[str], split: str) -> None:
    how = ("two task folds of its train sessions" if split == "train" else
           "its own train sessions as evidence, its test sessions replayed")
    print(f"\n## {app} ({split}): {len(got['agents'])} agents, leave one agent out, {how}")
    print("| arm | saved / ceiling | detours (/ep.) | lookups | named_other used / made | utility |\n|---|---|---|---|---|---|")
    for arm in arms:
        t = got["totals"][arm]
        eps = max(1.0, t["episodes"])
        print(f"| {arm} | {t['saved']:.0f} / {t['ceiling']:.0f} | {t['detours']:.0f} ({t['detours'] / eps:.2f}) | "
              f"{t['lookups']:.0f} | {t['named_other_used']:.0f} / {t['named_other']:.0f} | {utility(t):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=APPS)
    parser.add_argument("--split", default="train", choices=("train", "test"))
    parser.add_argument("--choose", action="store_true", help="the whole grid (train split)")
    parser.add_argument("--grid", default="full", choices=("full", "small"), help="with --choose: the whole grid or "
                        "the chosen arm's neighbourhood")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if args.choose and args.split != "train":
        raise SystemExit("--choose reads the train split only")
    grid = (GRID if args.grid == "full" else SMALL_GRID) if args.choose else [CHOSEN]
    started = time.process_time()
    out: dict[str, Any] = {"split": args.split, "theta": THETA, "apps": {}}
    for app in args.apps.split(","):
        got = run_app(app, args.split, grid, args.cache)
        if not got["totals"]:
            raise SystemExit(f"{app}: no agent with {MIN_SESSIONS}+ sessions on the {args.split} split and others to learn from")
        out["apps"][app] = got
        print_app(app, got, ["none", "binary", *(arm_name(*g) for g in grid)], args.split)
    if args.choose:
        print("\n## utility summed over apps, each app's share of its best arm")
        for arm in ["none", "binary", *(arm_name(*g) for g in grid)]:
            total = sum(utility(a["totals"][arm]) for a in out["apps"].values())
            print(f"{arm}: {total:.1f}")
    print(f"\n{time.process_time() - started:.0f} s CPU")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
