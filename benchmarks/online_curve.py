"""Online learning curve: an agent's sessions staged as they arrive, replayed on its test sessions (beside the paper's Table 4).

    python benchmarks/online_curve.py [--apps tau2/retail,tau2/airline] [--ns 0,10,30,100,all]
        [--choose-half] [--half K] [--json OUT]

For each τ² agent with sessions on both sides of the split, its train sessions arrive in recorded
order and are staged as they arrive (`flow/online.py`: only the new sessions' counts are added).
At each n the flow of each protocol is replayed from the record on the agent's test sessions at
θ = 0.3 (the paper's Table 4 setting):

- own             the agent's first n sessions alone
- prior fixed     the other agents' train sessions weighing 100 sessions, plus the first n
- prior falling   the same prior weighing w(n) = 100·k/(k+n) (`learn/served.py`), plus the first n
- holdout 10%     prior falling, but of the agent's own only the sessions served record-only
                  (a hashed tenth) teach: the `holdout` rule of the served loop

Every staged flow is checked byte for byte against a batch learn of the same sessions (and
prior weight); a mismatch stops the run. `--choose-half` chooses k on the train split alone:
each agent's flow after its first 10 and 30 sessions (k ∈ 10, 30, 100, 300) is replayed on its
own later train sessions, and the k with the most utility (saved − detours·θ/(1−θ)) wins.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Sequence

from lifecycle_data import DEFAULT_CACHE, in_order, load_app
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.served_loop import is_holdout
from stretto_core.flow.ir import Flow, learn
from stretto_core.flow.online import Staged, prior_counts
from stretto_core.learn.served import DEFAULT_PRIOR_HALF, DEFAULT_PRIOR_SESSIONS, prior_weight_at
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import Session

THETA = 0.3
PROTOCOLS = ("own", "prior fixed", "prior falling", "holdout 10%")
HALVES = (0.0, 10.0, 30.0, 100.0, 300.0, float("inf"))
"""k = 0: the agent's own sessions alone once it has any; k = ∞: the prior fixed at w0."""


def agent_of(s: Session) -> str:
    return s.header.agent_model or "unknown"


def replayed(flow: Flow | None, test: Sequence[Session]) -> dict[str, float]:
    turns = sum(len(s.llm_turns()) for s in test)
    if flow is None:
        return {"saved": 0, "detours": 0, "llm_turns": turns, "episodes": len(test)}
    r = replay_sessions(FlowRuntime(flow), list(test), ReplayOptions(theta=THETA, processes=1))
    return {"saved": r.turns_saved, "detours": r.detours, "llm_turns": r.llm_turns, "episodes": r.episodes}


def utility(row: dict[str, float]) -> float:
    return row["saved"] - row["detours"] * THETA / (1 - THETA)


CHOOSE_NS = (10, 30, 50)
"""The agent's first n train sessions learn, its later ones (at least 20) are replayed."""


def choose_half(groups: dict[str, tuple[list[Session], list[Session]]]) -> dict[float, float]:
    """Utility per k over each agent's later train sessions (no test session read)."""
    totals: dict[float, float] = defaultdict(float)
    for own, others in groups.values():
        for n in CHOOSE_NS:
            if len(own) < n + 20:
                continue
            for k in HALVES:
                flow = learn(own[:n], prior=others, prior_weight=prior_weight_at(n, DEFAULT_PRIOR_SESSIONS, k))
                totals[k] += utility(replayed(flow, own[n:]))
    return dict(totals)


def curve(own: list[Session], others: list[Session], test: list[Session], ns: list[int], half: float) -> dict:
    """Each protocol at each n, staged as the sessions arrive, checked against a batch learn."""
    prior = prior_counts(others)
    stages = {"own": Staged(own=None), "prior fixed": Staged(own=None, prior=prior, half=float("inf")),
              "prior falling": Staged(own=None, prior=prior, half=half),
              "holdout 10%": Staged(own=None, prior=prior, half=half)}
    out: dict = {p: {} for p in PROTOCOLS}
    done = 0
    for n in ns:
        new = own[done:n]
        done = n
        for name, staged in stages.items():
            staged.add([s for s in new if is_holdout(s)] if name == "holdout 10%" else new)
        for name, staged in stages.items():
            if staged.own is None and staged.prior is None:
                flow = None
            else:
                flow = staged.flow()
                taught = [s for s in own[:n] if is_holdout(s)] if name == "holdout 10%" else own[:n]
                w = staged.prior_weight() if staged.prior is not None else None
                batch = learn(taught, prior=others, prior_weight=w) if staged.prior is not None else learn(taught)
                if flow.to_json() != batch.to_json():
                    raise SystemExit(f"{name} at n = {n}: the staged flow differs from a batch learn of the same sessions")
            out[name][n] = replayed(flow, test)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default="tau2/retail,tau2/airline")
    parser.add_argument("--ns", default="0,10,30,100,all")
    parser.add_argument("--half", type=float, default=DEFAULT_PRIOR_HALF)
    parser.add_argument("--choose-half", action="store_true")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    started = time.process_time()
    out: dict = {"half": args.half, "apps": {}}
    for app in args.apps.split(","):
        corpus = load_app(app, args.cache)
        train, test = in_order(corpus.on("train", app=app)), corpus.on("test", app=app)
        agents = sorted({agent_of(s) for s in train} & {agent_of(s) for s in test})
        groups = {a: ([s for s in train if agent_of(s) == a], [s for s in train if agent_of(s) != a]) for a in agents}
        groups = {a: g for a, g in groups.items() if len(g[0]) >= 20 and g[1]}
        if args.choose_half:
            totals = choose_half(groups)
            best = max(totals, key=lambda k: totals[k])
            print(f"{app}: train-split utility by k: " + ", ".join(f"k={k:g}: {v:.1f}" for k, v in sorted(totals.items()))
                  + f" → best k = {best:g}")
            out["apps"][app] = {"choose_half": {str(k): v for k, v in totals.items()}, "best": best}
            continue
        print(f"\n## {app}: turns saved · detours per episode on each agent's test sessions, θ = {THETA}, "
              f"prior falling with k = {args.half:g}")
        out["apps"][app] = {}
        for agent, (own, others) in groups.items():
            ns = sorted({min(len(own), int(n)) if n != "all" else len(own) for n in args.ns.split(",")})
            mine = [s for s in test if agent_of(s) == agent]
            rows = curve(own, others, mine, ns, args.half)
            print(f"\n### {agent}: {len(own)} own train sessions, {len(others)} of other agents, {len(mine)} test; "
                  "every staged flow byte-identical to its batch learn")
            print("| protocol | " + " | ".join(f"n = {n}" for n in ns) + " |\n|---|" + "---|" * len(ns))
            for name in PROTOCOLS:
                cells = [f"{r['saved'] / r['llm_turns']:.1%} · {r['detours'] / r['episodes']:.2f}"
                         for r in (rows[name][n] for n in ns)]
                print(f"| {name} | " + " | ".join(cells) + " |")
            out["apps"][app][agent] = {name: {str(n): v for n, v in r.items()} for name, r in rows.items()}
    print(f"\n{time.process_time() - started:.0f} s CPU")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
