"""Learning curves (paper §4.3, Table 4, Figure 5): how many sessions a speculator needs.

For one agent's test episodes, a speculator is learned from the first n sessions of
  own     the agent's own train sessions, in a random order;
  others  other agents' train sessions, in a random order;
  prior   PRIOR_SESSIONS of the others' drawn at random, weighed as a power prior of
          PRIOR_WEIGHT sessions, plus the agent's own first n;
and replayed at θ = 0.3 with the use-before-write speculator. Each n is run in ORDERS random
orders (and, for the prior, ORDERS draws); learning from all of a pool does not depend on the
order, so it runs once. An n larger than the pool is left out (`—`); the first n of a pool of n
is all of it, so every agent is in each cell its pool allows.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

import numpy as np
from pydantic import BaseModel

from stretto_core.flow.ir import learn
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.evaluate.measure.tables import markdown_table
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.replay.episode import PreparedEpisode
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.sessions.model import Session
from stretto_core.serve.speculator import DEFAULT_THETA

SIZES = (10, 30, 100)
"""Sessions learned from, besides all of them."""

ORDERS = 3
"""Random orders of the sessions (and random draws of the prior) per n."""

PRIOR_SESSIONS = 100
"""Other agents' sessions drawn at random for the prior."""

PRIOR_WEIGHT = 100.0
"""What the drawn sessions weigh in all, as sessions; never more than one per session drawn."""

PROTOCOLS = {"own": "the agent's own sessions", "others": "other agents' sessions",
             "prior": f"{PRIOR_SESSIONS} of theirs, then its own"}


class CurvePoint(BaseModel):
    """One speculator learned from n sessions (one order, or one draw), replayed on one agent's tests."""

    group: str
    agent: str
    protocol: str
    sessions: int
    """n: the pool's sessions learned from (for the prior protocol, the agent's own)."""
    all: bool
    run: int
    episodes: int
    llm_turns: int
    saved: int
    detours: int
    lookups: int
    turns_saved: float
    detours_per_episode: float


class CurveRow(BaseModel):
    """Table 4's cell: the mean over agents and runs at one n (or all) of one protocol."""

    group: str
    protocol: str
    protocol_label: str
    size: str
    """`10`, `30`, `100`, or `all`."""
    sessions: float
    """n; for `all`, the mean over agents of how many there were."""
    agents: list[str]
    all_sessions: list[int]
    runs: int
    turns_saved: float
    detours_per_episode: float


def _sizes(pool: int, sizes: Sequence[int]) -> list[int]:
    return [n for n in sizes if 0 < n <= pool]


def learning_curve(group: str, agent: str, own: Sequence[Session], others: Sequence[Session],
                   test: Sequence[PreparedEpisode], *, sizes: Sequence[int] = SIZES, orders: int = ORDERS,
                   seed: int = 0, theta: float = DEFAULT_THETA) -> list[CurvePoint]:
    """Every run of every protocol the pools allow, for one agent's test episodes.

    A set of sessions is learned from once: the first n of a pool of n is all of it, in any order.
    """
    points: list[CurvePoint] = []
    done: dict[tuple[tuple[str, ...], tuple[str, ...]], ReplayResult] = {}
    options = ReplayOptions(theta=theta, policy="use")

    def run(protocol: str, sessions: Sequence[Session], n: int, is_all: bool, k: int,
            prior: Sequence[Session] = ()) -> None:
        key = (tuple(sorted(s.session_id for s in sessions)), tuple(sorted(s.session_id for s in prior)))
        if key not in done:
            weight = min(PRIOR_WEIGHT, float(len(prior))) if prior else None
            flow = FlowRuntime(learn(list(sessions), prior=list(prior), prior_weight=weight))
            done[key] = replay_sessions(flow, test, options)
        r = done[key]
        points.append(CurvePoint(group=group, agent=agent, protocol=protocol, sessions=n, all=is_all, run=k,
                                 episodes=r.episodes, llm_turns=r.llm_turns, saved=r.turns_saved, detours=r.detours,
                                 lookups=r.lookups, turns_saved=r.turns_saved / r.llm_turns if r.llm_turns else 0.0,
                                 detours_per_episode=r.detours / r.episodes if r.episodes else 0.0))

    for protocol, pool in (("own", own), ("others", others)):
        if not pool:
            continue
        run(protocol, pool, len(pool), True, 0)
        for k in range(orders):
            order = np.random.default_rng([seed, k]).permutation(len(pool))
            for n in _sizes(len(pool), sizes):
                run(protocol, [pool[i] for i in order[:n]], n, False, k)
    if own and others:
        for k in range(orders):
            order = np.random.default_rng([seed, k]).permutation(len(own))
            drawn = np.random.default_rng([seed, 1000 + k]).permutation(len(others))[:PRIOR_SESSIONS]
            prior = [others[i] for i in sorted(drawn)]
            run("prior", own, len(own), True, k, prior)
            for n in _sizes(len(own), sizes):
                run("prior", [own[i] for i in order[:n]], n, False, k, prior)
    return points


def curve_rows(points: Sequence[CurvePoint]) -> list[CurveRow]:
    """Table 4: per group, protocol and n, the mean over each agent's runs, then over agents."""
    cells: dict[tuple[str, str, str], dict[str, list[CurvePoint]]] = defaultdict(lambda: defaultdict(list))
    for p in points:
        size = "all" if p.all else str(p.sessions)
        cells[(p.group, p.protocol, size)][p.agent].append(p)
    rows = []
    for (group, protocol, size), by_agent in cells.items():
        agents = sorted(by_agent)
        per_agent = [by_agent[a] for a in agents]
        rows.append(CurveRow(
            group=group, protocol=protocol, protocol_label=PROTOCOLS[protocol], size=size,
            sessions=float(np.mean([runs[0].sessions for runs in per_agent])), agents=agents,
            all_sessions=[runs[0].sessions for runs in per_agent] if size == "all" else [],
            runs=sum(len(r) for r in per_agent),
            turns_saved=float(np.mean([np.mean([p.turns_saved for p in runs]) for runs in per_agent])),
            detours_per_episode=float(np.mean([np.mean([p.detours_per_episode for p in runs]) for runs in per_agent]))))
    order = {name: i for i, name in enumerate(PROTOCOLS)}
    return sorted(rows, key=lambda r: (r.group, order[r.protocol], r.size == "all", r.sessions))


def render_curves(rows: Sequence[CurveRow], sizes: Sequence[int] = SIZES) -> str:
    """Table 4: `turns saved · detours per episode` per protocol and n; `—` where the pool is smaller."""
    labels = [str(n) for n in sizes] + ["all"]
    cell = {(r.group, r.protocol, r.size): r for r in rows}
    lines = []
    for group in dict.fromkeys(r.group for r in rows):
        for protocol in PROTOCOLS:
            if not any((group, protocol, s) in cell for s in labels):
                continue
            line = {"Group": group, "Learned from": PROTOCOLS[protocol]}
            for s in labels:
                r = cell.get((group, protocol, s))
                text = "—" if r is None else f"{100 * r.turns_saved:.1f}% · {r.detours_per_episode:.2f}"
                if r is not None and s == "all":
                    text += f" ({'/'.join(str(n) for n in r.all_sessions)})"
                line[f"n = {s}" if s != "all" else "All"] = text
            lines.append(line)
    if not lines:
        return "(no agent has enough sessions for a learning curve)"
    headers = list(lines[0])
    return markdown_table(lines, {h: h for h in headers}, right=headers[2:])
