"""The bench's measurements of one domain, each from its plan (which flow serves which tests).

Table 3 (both speculators at θ = 0.3 on the same test episodes), the costs that price it, the
record against the environment, and the cases for learning curves and cross-harness transfer.
The bench (`bench.py`) calls these in turn and the report (`bench_report.py`) prints them.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import replace
from typing import Sequence

from pydantic import BaseModel

from stretto_core.errors import StrettoError
from stretto_core.evaluate.measure.bench_data import Corpus, agent_key
from stretto_core.evaluate.measure.bench_plan import DomainPlan
from stretto_core.evaluate.measure.costs import AppCosts, costs_by_app
from stretto_core.evaluate.measure.crossharness import HarnessCase
from stretto_core.evaluate.measure.metrics import Assignment, merge_results, replay_each
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.replay.compare import compare_replays
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.sessions.model import Session
from stretto_core.serve.speculator import DEFAULT_THETA, POLICIES

log = logging.getLogger("stretto.bench")

CURVE_AGENTS = 3
"""Agents per domain with a learning curve (the paper's three), those with the most train sessions."""

CURVE_MIN_OWN = 10
"""An agent needs at least this many train sessions of its own for a learning curve."""


def replay_both(plan: DomainPlan, theta: float = DEFAULT_THETA, weigh: bool = False,
                env: bool = False) -> dict[str, ReplayResult]:
    """Both speculators on the plan's test episodes, each agent's served by its own flow."""
    return {policy: replay_each(plan.assignments, ReplayOptions(theta=theta, policy=policy, weigh=weigh, env=env,
                                                                split="test"))
            for policy in POLICIES}


def counted_costs(plan: DomainPlan, use_replay: ReplayResult) -> AppCosts | None:
    """β, δ and θ* counted in the domain's test episodes and the use-before-write replay's detours."""
    rows = costs_by_app(plan.episodes, use_replay)
    return rows[0].model_copy(update={"app": plan.domain}) if rows else None


class Agreement(BaseModel):
    """Record against environment on the same episodes, one speculator (paper App. D)."""

    domain: str
    policy: str
    episodes: int
    record_saved: int
    env_saved: int
    saved_ratio: float | None
    same_saved_share: float | None
    record_detours: int
    env_detours: int
    detours_ratio: float | None
    env_mismatches: int
    """Recorded calls whose result in the environment differed from the record."""


class LeadAgreement(BaseModel):
    """How much of the environment's lead of use-before-write over next-step the record counts."""

    domain: str
    record_lead: int
    env_lead: int
    ratio: float | None


def _env_replay(assignments: Sequence[Assignment], options: ReplayOptions) -> tuple[ReplayResult, list[str]]:
    """An environment replay; an episode whose environment cannot be built is left out and named."""
    try:
        return replay_each(assignments, options), []
    except StrettoError as whole:
        log.warning("environment replay failed (%s); retrying episode by episode", whole)
    parts, failed = [], []
    for flow, episodes in assignments:
        for episode in episodes:
            try:
                parts.append(replay_sessions(flow, [episode], replace(options, processes=1)))
            except StrettoError as exc:
                failed.append(f"{episode.session_id}: {exc}")
    return merge_results(parts, config=options.config()), failed


class EnvComparison(BaseModel):
    """A domain's environment replays and how the record's compare with them."""

    rows: list[Agreement]
    lead: LeadAgreement
    failures: list[str]
    replays: dict[str, ReplayResult]


def record_vs_env(plan: DomainPlan, record: dict[str, ReplayResult], theta: float = DEFAULT_THETA) -> EnvComparison:
    """Replay the plan in the environment and compare with the record replays of the same flows."""
    rows: list[Agreement] = []
    replays: dict[str, ReplayResult] = {}
    env_saved: dict[str, int] = {}
    rec_saved: dict[str, int] = {}
    failures: list[str] = []
    for policy in POLICIES:
        env, failed = _env_replay(plan.assignments, ReplayOptions(theta=theta, policy=policy, env=True, split="test"))
        failures.extend(failed)
        replays[policy] = env
        wanted = {r.session_id for r in env.episode_rows}
        rec = record[policy].model_copy(update={
            "episode_rows": [r for r in record[policy].episode_rows if r.session_id in wanted]})
        [pooled] = [row for row in compare_replays(rec, env).rows if row.app == "All"]
        rows.append(Agreement(domain=plan.domain, policy=policy, episodes=pooled.episodes,
                              record_saved=pooled.record_turns_saved, env_saved=pooled.env_turns_saved,
                              saved_ratio=pooled.turns_saved_ratio, same_saved_share=pooled.same_turns_share,
                              record_detours=pooled.record_detours, env_detours=pooled.env_detours,
                              detours_ratio=pooled.detours_ratio,
                              env_mismatches=sum(r.env_mismatches or 0 for r in env.episode_rows)))
        env_saved[policy], rec_saved[policy] = pooled.env_turns_saved, pooled.record_turns_saved
    env_lead = env_saved["use"] - env_saved["next"]
    rec_lead = rec_saved["use"] - rec_saved["next"]
    lead = LeadAgreement(domain=plan.domain, record_lead=rec_lead, env_lead=env_lead,
                         ratio=rec_lead / env_lead if env_lead else None)
    return EnvComparison(rows=rows, lead=lead, failures=failures, replays=replays)


class CurveCase(BaseModel):
    """One agent's pools for a learning curve (sessions by id, to keep the JSON small)."""

    domain: str
    agent: str
    own: int
    others: int
    test: int


def curve_cases(corpus: Corpus, plan: DomainPlan,
                agents: int = CURVE_AGENTS) -> list[tuple[CurveCase, list[Session], list[Session]]]:
    """The agents with the most train sessions of their own (at least CURVE_MIN_OWN) and test
    episodes: each with its own train sessions and the other agents' of the domain."""
    train = corpus.on("train", plan.domain)
    own: dict[str, list[Session]] = defaultdict(list)
    for s in train:
        own[agent_key(s.header.agent_model)].append(s)
    eligible = [a for a in plan.tests if len(own.get(a, [])) >= CURVE_MIN_OWN]
    chosen = sorted(eligible, key=lambda a: (-len(own[a]), a))[:agents]
    out = []
    for agent in chosen:
        others = [s for s in train if agent_key(s.header.agent_model) != agent]
        case = CurveCase(domain=plan.domain, agent=agent, own=len(own[agent]), others=len(others),
                         test=len(plan.tests[agent]))
        out.append((case, own[agent], others))
    return out


def harness_cases(corpus: Corpus, plan: DomainPlan) -> list[HarnessCase]:
    """Each (harness, agent) with test episodes, its own harness's train sessions and the others'."""
    train = corpus.on("train", plan.domain)
    if len({s.header.harness for s in train}) < 2:
        return []
    cases = []
    by_key: dict[tuple[str, str], list] = defaultdict(list)
    for agent, episodes in plan.tests.items():
        for e in episodes:
            by_key[(e.header.harness, agent)].append(e)
    for (harness, agent), episodes in sorted(by_key.items()):
        mine = [s for s in train if s.header.harness == harness]
        theirs = [s for s in train if s.header.harness != harness and agent_key(s.header.agent_model) != agent]
        cases.append(HarnessCase(agent=agent, harness=harness, test=episodes, own_harness=mine, other_harnesses=theirs))
    return cases
