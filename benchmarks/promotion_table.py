"""Promotion table: saved turns, detours and net tokens with no promotion, the posterior bar and the strict bar.

    python benchmarks/promotion_table.py [--apps agentdojo/banking,agentdojo/slack,agentdojo/travel,
        agentdojo/workspace,tau2/retail,tau2/airline] [--choose-prior] [--prior-weight P] [--json OUT]

Per app and agent (AgentDojo: each pipeline; τ²: each agent with sessions on both sides of the
split), the flow is learned from the *other* agents' train sessions (a new agent's day: it has
only others' evidence), promoted on the agent's own train sessions (`stretto flow promote`'s
code, `evaluate/promotion.py`), and replayed from the record on the agent's own test sessions, at
the app's own θ* = δ/(β+δ) (Appendix B: β and δ counted on the train split by `evaluate/measure/
costs.py`; an app whose runs report no tokens is priced at the paper's 0.3, and says so). Net
tokens = saved turns' tokens − detours' tokens (input tokens where the runs record them).

`--choose-prior` chooses the posterior bar's prior weight P on the train split alone: each
agent's train tasks are dealt into two folds by a hash of the task; the flow promoted on one
fold is replayed on the other, and the P with the most net tokens over both folds and every
agent wins. The test split is read once, for the table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Sequence

from lifecycle_data import DEFAULT_CACHE, load_app
from stretto_core.evaluate.measure.costs import costs_by_app
from stretto_core.evaluate.promotion import promote
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow.ir import Flow, learn
from stretto_core.flow.promotion import DEFAULT_PRIOR_WEIGHT
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import Session

APPS = "agentdojo/banking,agentdojo/slack,agentdojo/travel,agentdojo/workspace,tau2/retail,tau2/airline"
PAPER_THETA = 0.3
ARMS = ("none", "posterior", "strict")
PRIORS = (1.0, 3.0, 10.0, 40.0)


def agent_of(s: Session) -> str:
    return s.header.agent_model or "unknown"


def theta_star(train: Sequence[Session], app: str) -> tuple[float, str]:
    """The app's θ* from its train split (β, δ of a replay of the pooled train flow on it)."""
    flow = learn(list(train))
    episodes = prepare_sessions(list(train))
    replay = replay_sessions(FlowRuntime(flow), episodes, ReplayOptions(theta=PAPER_THETA))
    row = next(r for r in costs_by_app(episodes, replay) if r.app == app)
    if row.theta_star is None:
        return PAPER_THETA, "no tokens recorded: the paper's 0.3"
    return round(row.theta_star, 3), f"β {row.beta:.0f}, δ {row.delta:.0f} tokens (train)"


def score(result: ReplayResult) -> dict[str, float]:
    rows = result.episode_rows
    saved_tokens = sum(r.saved_turn_tokens for r in rows)
    detour_tokens = sum(r.detour_tokens for r in rows)
    return {"episodes": result.episodes, "llm_turns": result.llm_turns, "saved": result.turns_saved,
            "detours": result.detours, "lookups": result.lookups, "net_tokens": round(saved_tokens - detour_tokens)}


def arms(flow: Flow, evidence: Sequence[Session], test: Sequence[Session], theta: float,
         prior_weight: float, names: Sequence[str] = ARMS) -> dict[str, tuple[dict[str, float], Flow]]:
    """Each arm's flow replayed on `test`."""
    out = {}
    for name in names:
        served = flow if name == "none" else promote(flow, list(evidence), name, theta, prior_weight)[0]
        result = replay_sessions(FlowRuntime(served), list(test), ReplayOptions(theta=theta, processes=1))
        out[name] = (score(result), served)
    return out


def fold_of(s: Session) -> int:
    return int(hashlib.sha1((s.header.task_id or s.session_id).encode()).hexdigest(), 16) % 2


def choose_prior(groups: dict[str, tuple[Flow, list[Session]]], theta: float) -> dict[float, float]:
    """Net tokens per prior weight, promoting on one fold of each agent's train tasks and replaying the other."""
    totals: dict[float, float] = defaultdict(float)
    for _, (flow, train) in groups.items():
        for k in (0, 1):
            evidence = [s for s in train if fold_of(s) == k]
            held = [s for s in train if fold_of(s) != k]
            if not evidence or not held:
                continue
            for p in PRIORS:
                totals[p] += arms(flow, evidence, held, theta, p, ("posterior",))["posterior"][0]["net_tokens"]
    return dict(totals)


def slack_channel_rows(flows: dict[str, Flow]) -> list[str]:
    """The channel-reading site (read_channel_messages) in each pipeline's promoted flow."""
    lines = []
    for name, flow in flows.items():
        if flow.promotion is None:
            continue
        for s in flow.promotion.sites:
            if s.tool == "read_channel_messages":
                lines.append(f"| {name} | `{s.site}` | {s.used:g}/{s.lookups:g} used, {s.tasks} tasks | "
                             f"posterior {s.posterior or 0:.3f} | {s.state} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=APPS)
    parser.add_argument("--prior-weight", type=float, default=DEFAULT_PRIOR_WEIGHT)
    parser.add_argument("--choose-prior", action="store_true", help="Choose P on the train split (no test read).")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    started = time.process_time()
    out: dict = {"prior_weight": args.prior_weight, "apps": {}}
    for app in args.apps.split(","):
        corpus = load_app(app, args.cache)
        train, test = corpus.on("train", app=app), corpus.on("test", app=app)
        agents = sorted({agent_of(s) for s in train} & {agent_of(s) for s in test})
        theta, why = theta_star(train, app)
        groups: dict[str, tuple[Flow, list[Session]]] = {}
        for agent in agents:
            others = [s for s in train if agent_of(s) != agent]
            if others:
                groups[agent] = (learn(others), [s for s in train if agent_of(s) == agent])
        if args.choose_prior:
            totals = choose_prior(groups, theta)
            best = max(totals, key=lambda p: (totals[p], -p))
            print(f"{app}: θ* = {theta} ({why}); train-split net tokens by prior weight: "
                  + ", ".join(f"P={p:g}: {v:,.0f}" for p, v in sorted(totals.items())) + f" → best P = {best:g}")
            out["apps"][app] = {"theta_star": theta, "choose_prior": {str(p): v for p, v in totals.items()}, "best": best}
            continue
        per_arm: dict[str, dict[str, float]] = {a: defaultdict(float) for a in ARMS}
        promoted: dict[str, Flow] = {}
        rows = []
        for agent, (flow, own_train) in groups.items():
            own_test = [s for s in test if agent_of(s) == agent]
            got = arms(flow, own_train, own_test, theta, args.prior_weight)
            for arm, (sc, served) in got.items():
                for k, v in sc.items():
                    per_arm[arm][k] += v
                if arm == "posterior":
                    promoted[agent] = served
            rows.append({"agent": agent, **{arm: sc for arm, (sc, _) in got.items()}})
        print(f"\n## {app}: θ* = {theta} ({why}); {len(groups)} agents; flows from the other agents' train "
              f"sessions, promoted on the agent's own train sessions, replayed on its test sessions")
        print("| bar | episodes | LLM turns | saved | detours | net tokens |\n|---|---|---|---|---|---|")
        for arm in ARMS:
            t = per_arm[arm]
            share = t["saved"] / t["llm_turns"] if t["llm_turns"] else 0.0
            print(f"| {arm} | {t['episodes']:.0f} | {t['llm_turns']:.0f} | {t['saved']:.0f} ({share:.1%}) | "
                  f"{t['detours']:.0f} | {t['net_tokens']:,.0f} |")
        if app == "agentdojo/slack":
            lines = slack_channel_rows(promoted)
            if lines:
                print("\nThe channel-reading site per pipeline (posterior bar):\n| pipeline | site | evidence | posterior | state |\n|---|---|---|---|---|")
                print("\n".join(lines))
        out["apps"][app] = {"theta_star": theta, "theta_from": why, "totals": {a: dict(v) for a, v in per_arm.items()},
                            "agents": rows}
    print(f"\n{time.process_time() - started:.0f} s CPU")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
