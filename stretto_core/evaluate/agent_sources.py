"""Which agents a flow learns from, asked of agents it never saw: leave one agent out on train,
and each body of agents' sessions replayed on test.

A deployment serves a new agent with a flow learned from other agents' sessions, so a design
decision is checked on the train split by leaving one agent out (the brief's method), across
task folds as well: the agents of a τ² domain ran the same tasks, and a flow that learned a task
from one agent would replay it for another (the same customer, the same order ids). So the
train tasks are dealt into folds by a hash of the task id (`site_calibration.folds_by_hash`: a
task keeps its fold when tasks are added), and for each agent A and fold k the held-out part is
A's sessions of fold k, learned from by one of three rules, over the other folds only:

    others   the other agents' sessions  (a new agent: the deployment's question)
    own      A's own sessions             (the agent's own history, for reference)
    all      every agent's sessions

`agent_cv` replays each held-out part from the record with each variant (`full` is the
use-before-write speculator, `next` the next-step rule) at θ = 0.3 and gathers per agent and
pooled results, with 95% bootstrap intervals over tasks; `compare` pairs two rules on the same
tasks. `source_bodies` and `replay_bodies` ask the same of the test split, read once: each train
agent alone and all together, each replayed on every test agent's episodes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

from pydantic import BaseModel

from stretto_core.errors import StrettoError
from stretto_core.evaluate.measure.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED, Interval, format_interval
from stretto_core.evaluate.measure.metrics import compare_speculators, measure, merge_results
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.site_calibration import DEFAULT_FOLDS, fold_key, folds_by_hash
from stretto_core.evaluate.variants import VariantFlows, variant
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.agents import agent_key
from stretto_core.sessions.model import Session

RULES = ("others", "own", "all")
"""Whom a held-out agent's flow learns from, over the other folds (module docstring)."""

ALL_AGENTS = "All"
"""The pooled row: every held-out agent, each served by its own flow."""


@dataclass
class AgentFold:
    """One held-out agent in one task fold, and the sessions of the other folds by rule."""

    agent: str
    fold: int
    held: list[Session]
    learn_from: dict[str, list[Session]]


def agents_of(sessions: Sequence[Session]) -> list[str]:
    return sorted({agent_key(s.header.agent_model) for s in sessions})


def agent_folds(sessions: Sequence[Session], folds: int = DEFAULT_FOLDS) -> list[AgentFold]:
    """Every (agent, fold) with held-out sessions, and what each rule learns from; a body left
    empty (an agent with no session outside the fold) is absent from `learn_from`."""
    agents = agents_of(sessions)
    if len(agents) < 2:
        raise StrettoError(f"leaving one agent out needs sessions of two agents or more; these are all of "
                           f"{agents[0] if agents else 'none'}")
    fold_of = folds_by_hash(sorted({fold_key(s) for s in sessions}), folds)
    out = []
    for agent in agents:
        for k in range(folds):
            held = [s for s in sessions if fold_of[fold_key(s)] == k and agent_key(s.header.agent_model) == agent]
            rest = [s for s in sessions if fold_of[fold_key(s)] != k]
            if not held:
                continue
            bodies = {"others": [s for s in rest if agent_key(s.header.agent_model) != agent],
                      "own": [s for s in rest if agent_key(s.header.agent_model) == agent], "all": rest}
            out.append(AgentFold(agent, k, held, {rule: body for rule, body in bodies.items() if body}))
    return out


class SourceCell(BaseModel):
    """One variant, learned by one rule (or from one body), on one agent's held-out episodes."""

    variant: str
    learned_from: str
    agent: str
    """The held-out (or test) agent, or `All`."""
    episodes: int
    ceiling_turns: int
    lookups: int
    used: int
    saved: int
    detours: int
    turns_saved: Interval
    detours_per_episode: Interval
    ceiling_share: Interval


class SourceComparison(BaseModel):
    """Two rules (or bodies) of one variant on the same tasks: b − a, paired."""

    variant: str
    agent: str
    a: str
    b: str
    tasks: int
    saved: int
    detours: int
    turns_saved: Interval
    detours_per_episode: Interval


def _cell(name: str, learned_from: str, agent: str, result: ReplayResult, draws: int, seed: int) -> SourceCell:
    m = measure(result, draws=draws, seed=seed)
    return SourceCell(variant=name, learned_from=learned_from, agent=agent, episodes=m.episodes,
                      ceiling_turns=result.ceiling_turns, lookups=m.lookups, used=m.used, saved=m.saved,
                      detours=m.detours, turns_saved=m.turns_saved, detours_per_episode=m.detours_per_episode,
                      ceiling_share=m.ceiling_share)


@dataclass
class SourceReplays:
    """Replays by (variant, rule or body, agent): each agent's episodes served by its own flows."""

    results: dict[tuple[str, str, str], ReplayResult]

    def cells(self, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> list[SourceCell]:
        return [_cell(v, rule, agent, result, draws, seed)
                for (v, rule, agent), result in sorted(self.results.items())]

    def compare(self, name: str, a: str, b: str, agent: str = ALL_AGENTS, draws: int = DEFAULT_DRAWS,
                seed: int = DEFAULT_SEED) -> SourceComparison | None:
        """b − a for one variant and agent, over the tasks both replayed (None: one is missing)."""
        ra, rb = self.results.get((name, a, agent)), self.results.get((name, b, agent))
        if ra is None or rb is None:
            return None
        c = compare_speculators(ra, rb, draws=draws, seed=seed, a_label=a, b_label=b)
        return SourceComparison(variant=name, agent=agent, a=a, b=b, tasks=c.tasks, saved=c.difference.saved,
                                detours=c.difference.detours, turns_saved=c.difference.turns_saved,
                                detours_per_episode=c.difference.detours_per_episode)


def _pooled(by_agent: dict[tuple[str, str, str], list[ReplayResult]], config) -> dict[tuple[str, str, str], ReplayResult]:
    out: dict[tuple[str, str, str], ReplayResult] = {}
    pooled: dict[tuple[str, str], list[ReplayResult]] = defaultdict(list)
    for (name, rule, agent), parts in by_agent.items():
        out[(name, rule, agent)] = merge_results(parts, config=config)
        pooled[(name, rule)].extend(parts)
    for (name, rule), parts in pooled.items():
        out[(name, rule, ALL_AGENTS)] = merge_results(parts, config=config)
    return out


def _options(name: str, theta: float, split: str) -> ReplayOptions:
    return ReplayOptions(theta=theta, policy=variant(name).policy, split=split, processes=1)


def agent_cv(sessions: Sequence[Session], variants: Sequence[str] = ("full", "next"),
             rules: Sequence[str] = RULES, folds: int = DEFAULT_FOLDS, theta: float = DEFAULT_THETA,
             flows: VariantFlows | None = None) -> SourceReplays:
    """Leave one agent out across task folds, on train sessions only (module docstring)."""
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        raise StrettoError(f"unknown rule {unknown[0]!r}; one of {', '.join(RULES)}")
    flows = flows or VariantFlows()
    parts: dict[tuple[str, str, str], list[ReplayResult]] = defaultdict(list)
    for fold in agent_folds(sessions, folds):
        for rule in rules:
            body = fold.learn_from.get(rule)
            if not body:
                continue
            for name in variants:
                result = replay_sessions(flows.model(body, variant(name)), fold.held, _options(name, theta, "all"))
                parts[(name, rule, fold.agent)].append(result)
    return SourceReplays(_pooled(parts, _options(variants[0], theta, "all").config()))


def source_bodies(train: Sequence[Session]) -> dict[str, list[Session]]:
    """Each train agent's sessions alone, and all of them together (`all`)."""
    bodies = {agent: [s for s in train if agent_key(s.header.agent_model) == agent] for agent in agents_of(train)}
    bodies["all"] = list(train)
    return bodies


def replay_bodies(bodies: dict[str, Sequence[Session]], test: Sequence[Session],
                  variants: Sequence[str] = ("full", "next"), theta: float = DEFAULT_THETA,
                  flows: VariantFlows | None = None) -> SourceReplays:
    """Each body's flow replayed on every test agent's episodes (the test split, read once)."""
    flows = flows or VariantFlows()
    by_agent: dict[str, list[Session]] = defaultdict(list)
    for s in test:
        by_agent[agent_key(s.header.agent_model)].append(s)
    parts: dict[tuple[str, str, str], list[ReplayResult]] = defaultdict(list)
    for label, body in bodies.items():
        for name in variants:
            model = flows.model(list(body), variant(name))
            for agent, episodes in sorted(by_agent.items()):
                parts[(name, label, agent)].append(replay_sessions(model, episodes, _options(name, theta, "all")))
    return SourceReplays(_pooled(parts, _options(variants[0], theta, "all").config()))


def cell_line(c: SourceCell) -> str:
    """One cell as a table row: saved (share), detours per episode, lookups (used)."""
    return (f"| {c.variant} | {c.learned_from} | {c.agent} | {c.episodes} | {c.saved} | "
            f"{format_interval(c.turns_saved, 100, 1, '%')} | {c.detours} | "
            f"{format_interval(c.detours_per_episode, 1, 2)} | {c.lookups} ({c.used}) |")


CELL_HEADER = ("| variant | learned from | agent | episodes | saved | turns saved | detours | detours / episode "
               "| lookups (used) |\n|---|---|---|---:|---:|---:|---:|---:|---:|")


def comparison_line(c: SourceComparison) -> str:
    return (f"| {c.variant} | {c.agent} | {c.b} − {c.a} | {c.tasks} | {c.saved:+d} | "
            f"{format_interval(c.turns_saved, 100, 1, '', True)} | {c.detours:+d} | "
            f"{format_interval(c.detours_per_episode, 1, 2, '', True)} |")


COMPARISON_HEADER = ("| variant | agent | difference | tasks | saved | turns saved (points) | detours | "
                     "detours / episode |\n|---|---|---|---:|---:|---:|---:|---:|")
