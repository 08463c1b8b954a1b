"""Which flow serves which test episodes: each test agent's speculator, learned from other agents.

For a test agent of a domain, the speculator is learned from the domain's train sessions of
every other agent (paper §3: every replay is of agents the speculator never saw). The published
runs do not always allow that, and then the plan falls back, in this order, and says so:
  1. other agents' train sessions of the same domain;
  2. all train sessions of the domain (no other agent has any: the agent's own);
  3. the same app in the other regime (τ² telecom with a user has no train sessions, only the
     solo runs do), other agents' first, then all.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

from pydantic import BaseModel

from stretto_core.flow.ir import learn
from stretto_core.flow.modes import mode_notes, mode_of
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.evaluate.measure.bench_data import Corpus, agent_key, domain_of
from stretto_core.evaluate.measure.ceiling import SOLO_SUFFIX
from stretto_core.evaluate.measure.metrics import Assignment
from stretto_core.evaluate.replay.episode import PreparedEpisode, prepare_sessions
from stretto_core.sessions.model import Session

OTHER_AGENTS = "other agents"
FALLBACK_MARK = "†"
"""Marks a row with a test agent whose speculator could not be learned from other agents."""


class LearnSource(BaseModel):
    """What one test agent's speculator was learned from."""

    domain: str
    agent: str
    test_episodes: int
    label: str
    fallback: bool
    sessions: int
    learned_from: list[str]
    mode_note: str = ""
    """Where the flow learned too few sessions of this domain's mode (user present or solo), what it
    learned and how it serves here (`flow/modes.py`); empty otherwise."""


class FlowCache:
    """Flows learned once per set of sessions (several agents of a domain often share one)."""

    def __init__(self) -> None:
        self._flows: dict[tuple[str, ...], FlowRuntime] = {}
        self.learned = 0

    def flow(self, sessions: Sequence[Session]) -> FlowRuntime:
        key = tuple(sorted(s.session_id for s in sessions))
        if key not in self._flows:
            self._flows[key] = FlowRuntime(learn(list(sessions)))
            self.learned += 1
        return self._flows[key]


def others_of(sessions: Sequence[Session], agent: str) -> list[Session]:
    return [s for s in sessions if agent_key(s.header.agent_model) != agent]


def learning_sessions(corpus: Corpus, domain: str, agent: str) -> tuple[list[Session], str, bool]:
    """The train sessions a test agent's speculator learns from, a label, and whether it fell back."""
    train = corpus.on("train", domain)
    if others_of(train, agent):
        return others_of(train, agent), OTHER_AGENTS, False
    if train:
        return train, "fallback: all train sessions of the domain (no other agent has any)", True
    app = domain.split(" ")[0]
    other_regime = [s for s in corpus.on("train", app=app) if domain_of(s.header) != domain]
    if others_of(other_regime, agent):
        return (others_of(other_regime, agent), f"fallback: other agents' train sessions of {app} in the other "
                "regime (this domain has none)", True)
    if other_regime:
        regime = sorted({domain_of(s.header) for s in other_regime})
        return (other_regime, f"fallback: all train sessions of {', '.join(regime)} (this domain has none, "
                "and no other agent has any)", True)
    return [], "no train sessions at all", True


@dataclass
class DomainPlan:
    """One domain's test agents, each with its test episodes and the flow that serves them."""

    benchmark: str
    domain: str
    sources: list[LearnSource] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    tests: dict[str, list[PreparedEpisode]] = field(default_factory=dict)

    def label(self, agent: str | None = None) -> str:
        """The domain (or one agent of it), marked † when a speculator in it fell back."""
        fell = any(s.fallback for s in self.sources if agent is None or s.agent == agent)
        name = self.domain if agent is None else f"{self.domain}: {agent}"
        return name + (f" {FALLBACK_MARK}" if fell else "")

    @property
    def episodes(self) -> list[PreparedEpisode]:
        return [e for _, eps in self.assignments for e in eps]

    def limited(self, per_domain: int) -> "DomainPlan":
        """The same plan over at most `per_domain` test episodes (spread over the agents)."""
        share = max(1, per_domain // max(1, len(self.assignments)))
        return DomainPlan(self.benchmark, self.domain, self.sources,
                          [(flow, list(eps)[:share]) for flow, eps in self.assignments],
                          {a: eps[:share] for a, eps in self.tests.items()})


def plan_domain(corpus: Corpus, domain: str, flows: FlowCache) -> DomainPlan:
    """Each test agent of the domain with the flow learned for it; agents with no source are left out."""
    by_agent: dict[str, list[Session]] = defaultdict(list)
    for s in corpus.on("test", domain):
        by_agent[agent_key(s.header.agent_model)].append(s)
    plan = DomainPlan(corpus.name, domain)
    for agent in sorted(by_agent):
        sessions, label, fallback = learning_sessions(corpus, domain, agent)
        plan.sources.append(LearnSource(domain=domain, agent=agent, test_episodes=len(by_agent[agent]), label=label,
                                        fallback=fallback, sessions=len(sessions),
                                        learned_from=sorted({agent_key(s.header.agent_model) for s in sessions})))
        if not sessions:
            continue
        episodes = prepare_sessions(by_agent[agent])
        plan.tests[agent] = episodes
        model = flows.flow(sessions)
        notes = mode_notes(model.flow, (mode_of(domain.endswith(SOLO_SUFFIX)),))
        plan.sources[-1].mode_note = notes[0] if notes else ""
        plan.assignments.append((model, episodes))
    return plan
