"""Which sessions to learn one agent from, when there are several harnesses (`stretto harnesses`).

For each agent × harness with test episodes, speculators are learned from its train sessions by
the protocols below and replayed at θ = 0.3 with the use-before-write speculator on its own
test episodes:

    own          its own sessions only (and its first n alone, where the prior rows have them)
    mates        its harness-mates' only (other agents of its harness)
    others       other harnesses' only (the same model's in another harness included)
    pooled       all of them, each session counting one
    mates@W+n    the harness-mates as a power prior of W sessions, plus its first n own sessions
                 (n = 10, 30 in `ORDERS` random orders, or all)
    rule M/O     its own sessions with harness-mates weighing M and other harnesses O
                 (`flow.harness.learn_split`): the candidates for `stretto learn`'s default

Turns saved and detours per episode come with 95% intervals from a bootstrap over tasks; the
domain rows pool every agent's test episodes, each served by the flow its protocol learned.
A protocol an agent's pools cannot run (no harness-mates, fewer own sessions than n) is left out
of its row and of the pooled row, and `kept` compares a protocol with `own` on the same agents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from pydantic import BaseModel

from stretto_core.evaluate.measure.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED, Interval, format_interval
from stretto_core.evaluate.measure.metrics import costs_for, measure, merge_results
from stretto_core.evaluate.measure.tables import markdown_table
from stretto_core.evaluate.replay.episode import PreparedEpisode
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow.harness import ALL, HarnessSplit, Weight, learn_split
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.serve.speculator import DEFAULT_THETA

PRIOR_WEIGHTS: tuple[float, ...] = (30.0, 100.0, 300.0)
"""What the harness-mates weigh as a prior, in sessions."""

OWN_SIZES: tuple[int, ...] = (10, 30)
"""The agent's first n own sessions besides all of them."""

ORDERS = 3
"""Random orders of the agent's own sessions per n."""

RULES: tuple[tuple[Weight, Weight], ...] = (
    (ALL, 0.0), (ALL, 30.0), (ALL, 100.0), (ALL, 300.0), (100.0, 100.0), (300.0, 100.0), (30.0, 30.0))
"""(harness-mates, other harnesses) weights tried as `stretto learn`'s rule, besides own and pooled."""


def _w(weight: Weight) -> str:
    return ALL if weight == ALL else f"{float(weight):g}"


def rule_name(mates: Weight, others: Weight) -> str:
    return f"rule mates {_w(mates)} / others {_w(others)}"


@dataclass
class HarnessAgentCase:
    """One agent in one harness: its train sessions split three ways, and its test episodes."""

    domain: str
    split: HarnessSplit
    test: Sequence[PreparedEpisode]

    @property
    def label(self) -> str:
        return f"{self.split.agent} ({self.split.harness})"


class ProtocolCell(BaseModel):
    """One protocol on one agent's tests (or pooled over a domain's agents)."""

    domain: str
    agent: str
    """`agent (harness)`, or `All` for the domain's pool."""
    protocol: str
    agents: int
    own: int
    mates: int
    others: int
    runs: int
    episodes: int
    llm_turns: int
    saved: float
    detours: float
    turns_saved: Interval
    detours_per_episode: Interval
    utility: Interval | None = None
    """Input tokens per episode, β·saved − δ·detours at the domain's costs (`metrics.costs_for`)."""
    kept: float | None = None
    """Turns saved over `own`'s on the same agents."""


def _mean(results: Sequence[ReplayResult]) -> ReplayResult:
    """One run's rows stand for several orders' when there is one; otherwise all runs pooled."""
    return results[0] if len(results) == 1 else merge_results(list(results))


def run_case(case: HarnessAgentCase, *, theta: float = DEFAULT_THETA, orders: int = ORDERS,
             seed: int = 0) -> dict[str, list[ReplayResult]]:
    """Every protocol the case's pools allow: protocol -> its replays (one per order)."""
    options = ReplayOptions(theta=theta, policy="use")
    s = case.split
    out: dict[str, list[ReplayResult]] = {}

    done: dict[tuple, ReplayResult] = {}

    def play(name: str, split: HarnessSplit, mates: Weight, others: Weight) -> None:
        mates, others = (mates if split.mates else 0.0), (others if split.others else 0.0)
        key = (tuple(x.session_id for x in split.own), len(split.mates), mates, len(split.others), others)
        if key not in done:  # a rule that reduces to another protocol on this agent's pools is that one
            flow = learn_split(split, mates=mates, others=others)
            done[key] = replay_sessions(FlowRuntime(flow), case.test, options)
        out.setdefault(name, []).append(done[key])

    def only(own: list, mates: list, others: list) -> HarnessSplit:
        return HarnessSplit(s.agent, s.harness, own, mates, others)

    if s.own:
        play("own", s, 0.0, 0.0)
    if s.mates:
        play("mates", only([], s.mates, []), ALL, 0.0)
    if s.others:
        play("others", only([], [], s.others), 0.0, ALL)
    if s.own and (s.mates or s.others):
        play("pooled", s, ALL, ALL)
    for n in OWN_SIZES:  # the agent's first n alone, to set the prior's rows against
        if s.mates and n < len(s.own):
            for k in range(orders):
                order = np.random.default_rng([seed, k]).permutation(len(s.own))
                play(f"own first {n}", only([s.own[i] for i in sorted(order[:n])], [], []), 0.0, 0.0)
    if s.mates:
        for weight in PRIOR_WEIGHTS:
            if s.own:
                play(f"mates@{weight:g}+all", only(s.own, s.mates, []), weight, 0.0)
            for n in OWN_SIZES:
                if n >= len(s.own):
                    continue
                for k in range(orders):
                    order = np.random.default_rng([seed, k]).permutation(len(s.own))
                    first = [s.own[i] for i in sorted(order[:n])]
                    play(f"mates@{weight:g}+{n}", only(first, s.mates, []), weight, 0.0)
    if s.own:  # every rule on every agent with sessions of its own, so rules compare on the same agents
        for mates, others in RULES:
            play(rule_name(mates, others), s, mates, others)
    return out


def _cell(domain: str, agent: str, protocol: str, cases: Sequence[HarnessAgentCase],
          runs: Sequence[ReplayResult], draws: int, seed: int, own: ReplayResult | None) -> ProtocolCell:
    pooled = _mean(runs)
    m = measure(pooled, costs_for(domain, None), draws=draws, seed=seed)
    scale = 1.0 / len(runs) if len(runs) > 1 and len(cases) == 1 else 1.0
    kept = None
    if own is not None and own.turns_saved:
        kept = (pooled.turns_saved * scale) / own.turns_saved
    return ProtocolCell(domain=domain, agent=agent, protocol=protocol, agents=len(cases),
                        own=sum(len(c.split.own) for c in cases), mates=sum(len(c.split.mates) for c in cases),
                        others=sum(len(c.split.others) for c in cases), runs=len(runs), episodes=m.episodes,
                        llm_turns=m.llm_turns, saved=m.saved * scale, detours=m.detours * scale,
                        turns_saved=m.turns_saved, detours_per_episode=m.detours_per_episode,
                        utility=m.utility, kept=kept)


def harness_table(cases: Sequence[HarnessAgentCase], *, theta: float = DEFAULT_THETA, orders: int = ORDERS,
                  draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED,
                  on_case: Callable[[HarnessAgentCase], None] | None = None) -> list[ProtocolCell]:
    """Per agent × harness every protocol it allows, then per domain each protocol pooled."""
    cells: list[ProtocolCell] = []
    by_domain: dict[str, list[tuple[HarnessAgentCase, dict[str, list[ReplayResult]]]]] = {}
    for case in cases:
        if not case.test:
            continue
        results = run_case(case, theta=theta, orders=orders, seed=seed)
        by_domain.setdefault(case.domain, []).append((case, results))
        own = results.get("own", [None])[0]
        for protocol, runs in results.items():
            cells.append(_cell(case.domain, case.label, protocol, [case], runs, draws, seed, own))
        if on_case is not None:
            on_case(case)
    for domain, done in by_domain.items():
        protocols = list(dict.fromkeys(p for _, r in done for p in r))
        for protocol in protocols:
            having = [(c, r) for c, r in done if protocol in r]
            runs = [run for _, r in having for run in r[protocol]]
            # several orders of one agent weigh as one run of it in the pool
            weights = [len(r[protocol]) for _, r in having]
            cell = _cell(domain, "All", protocol, [c for c, _ in having], runs, draws, seed, None)
            saved = sum(res.turns_saved / w for (_, r), w in zip(having, weights) for res in r[protocol])
            detours = sum(res.detours / w for (_, r), w in zip(having, weights) for res in r[protocol])
            cell.saved, cell.detours = saved, detours
            # kept: on the agents that have sessions of their own, this protocol's saved over own's
            with_own = [(r, w) for (_, r), w in zip(having, weights) if "own" in r]
            mine = sum(res.turns_saved / w for r, w in with_own for res in r[protocol])
            theirs = sum(r["own"][0].turns_saved for r, _ in with_own)
            cell.kept = mine / theirs if theirs else None
            cells.append(cell)
    return cells


def best_rule(cells: Sequence[ProtocolCell]) -> str | None:
    """The `own`/`pooled`/rule protocol (those `stretto learn --agent` can apply: all own sessions)
    with the highest utility over every domain's pool (β·saved − δ·detours at each domain's costs,
    per episode, summed over domains), ties to more turns saved, then to the name."""
    candidates = {"own", "pooled"} | {rule_name(m, o) for m, o in RULES}
    totals: dict[str, list[float]] = {}
    for c in cells:
        if c.agent == "All" and c.protocol in candidates:
            t = totals.setdefault(c.protocol, [0.0, 0.0])
            t[0] += (c.utility.point or 0.0) if c.utility is not None else 0.0
            t[1] += c.saved
    if not totals:
        return None
    return max(sorted(totals), key=lambda p: (round(totals[p][0], 3), round(totals[p][1], 6)))


def winners(cells: Sequence[ProtocolCell]) -> dict[str, str]:
    """Per agent (and pool): the protocol with the highest utility, ties to more saved, fewer detours."""
    best: dict[str, ProtocolCell] = {}
    for c in cells:
        key = f"{c.domain}: {c.agent}"
        have = best.get(key)
        if have is None or _rank(c) > _rank(have):
            best[key] = c
    return {k: v.protocol for k, v in best.items()}


def _rank(c: ProtocolCell) -> tuple[float, float, float]:
    utility = (c.utility.point or 0.0) if c.utility is not None else 0.0
    return (round(utility, 3), round(c.saved, 6), -round(c.detours, 6))


def render_harness_table(cells: Sequence[ProtocolCell]) -> str:
    """One line per agent (and domain pool) and protocol: turns saved, detours, kept of own's."""
    lines = []
    for c in cells:
        lines.append({
            "Domain": c.domain, "Agent (harness)": c.agent, "Learned from": c.protocol,
            "Sessions own / mates / others": f"{c.own} / {c.mates} / {c.others}",
            "Runs": str(c.runs),
            "Turns saved": format_interval(c.turns_saved, 100, 1, "%"),
            "Detours / episode": format_interval(c.detours_per_episode, 1, 2),
            "Utility / episode (k tokens)": format_interval(c.utility, 1e-3, 2),
            "Kept of own": "–" if c.kept is None else f"{100 * c.kept:.0f}%",
            "Episodes": str(c.episodes)})
    if not lines:
        return "(no agent has test episodes and train sessions to learn from)"
    headers = list(lines[0])
    return markdown_table(lines, {h: h for h in headers}, right=headers[3:])
