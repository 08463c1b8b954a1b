"""Counting each site's evidence on a deployment's own sessions: what `stretto flow promote` runs.

The clean sessions (recorded, shadowed or held out: no lookup of stretto's changed what the
agent did) that the flow did not learn from are replayed from the record with the flow deciding
at θ, every site serving (any promotion the flow holds is set aside). Each lookup the replay
makes is a would-be lookup of its (site, tool); it was used when the agent made that very call
itself before its next write. `flow/promotion.py` turns the counts into states.

A served session is not evidence: where the flow served, the agent did not make the calls the
lookups answered, so a replay would count them as detours. A session whose header names no mode
(an older recorder, an ingested run) was served when it holds a lookup stretto showed
(`learn/served.py`'s `is_served`), and recorded otherwise.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from stretto_core.evaluate.replay.episode import EpisodeError, prepare_session
from stretto_core.evaluate.replay.record import RecordSource
from stretto_core.evaluate.replay.rows import LookupRow
from stretto_core.evaluate.replay.run import ReplayOptions, build_engine, replay_sessions
from stretto_core.evaluate.replay.walk import Walk
from stretto_core.evaluate.site_calibration import NotedBindings
from stretto_core.flow.ir import Flow, learn
from stretto_core.flow.promotion import (DEFAULT_PRIOR_WEIGHT, Promotion, SitePromotion, default_state, judge)
from stretto_core.flow.use_evidence import (DEFAULT_AGENT_PRIOR, DEFAULT_SITE_PRIOR, EvidenceKey, UseCount, UseEvidence,
                                            count_use, evidence_key, factor_of)
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.learn.served import is_served
from stretto_core.sessions.fingerprint import session_fingerprint
from stretto_core.sessions.model import Session


@dataclass
class CleanSessions:
    """The sessions a promotion may judge on, and how many of the others were set aside, why."""

    sessions: list[Session] = field(default_factory=list)
    served: int = 0
    learned: int = 0
    unreadable: int = 0

    def describe(self) -> str:
        skipped = [f"{n} {why}" for n, why in ((self.served, "served (their lookups changed what the agent did)"),
                                               (self.learned, "the flow learned from"),
                                               (self.unreadable, "without a manifest")) if n]
        return f"{len(self.sessions)} clean sessions" + (f"; set aside: {', '.join(skipped)}" if skipped else "")


def clean_sessions(sessions: Iterable[Session], flow: Flow) -> CleanSessions:
    """The sessions not served and not learned from (by fingerprint, `provenance.learned`)."""
    learned = set(flow.provenance.learned or ())
    out = CleanSessions()
    for s in sessions:
        if is_served(s):
            out.served += 1
        elif learned and session_fingerprint(s) in learned:
            out.learned += 1
        else:
            out.sessions.append(s)
    return out


@dataclass
class SiteTally:
    lookups: float = 0.0
    used: float = 0.0
    score: float = 0.0
    tasks: set[str] = field(default_factory=set)


def unpromoted(flow: Flow) -> Flow:
    """The flow with every site serving (its promotion set aside)."""
    return flow.model_copy(update={"promotion": None})


def would_be_lookups(flow: Flow, sessions: Sequence[Session], theta: float = DEFAULT_THETA) -> list[LookupRow]:
    """The lookups the flow, every site serving, makes replaying `sessions` from the record."""
    episodes = []
    for s in sessions:
        try:
            episodes.append(prepare_session(s, None if s.header.manifest is not None else flow.manifest))
        except EpisodeError:
            continue
    if not episodes:
        return []
    result = replay_sessions(FlowRuntime(unpromoted(flow)), episodes, ReplayOptions(theta=theta, processes=1))
    return result.lookup_rows


def tally_sites(rows: Iterable[LookupRow]) -> dict[tuple[str, str], SiteTally]:
    """Would-be lookups, used, scores and tasks per (site, tool); transient ones answer nothing."""
    sites: dict[tuple[str, str], SiteTally] = defaultdict(SiteTally)
    for row in rows:
        if row.transient:
            continue
        t = sites[(row.site, row.tool)]
        t.lookups += 1
        t.used += int(row.used)
        t.score += row.score
        t.tasks.add(row.task_id or row.session_id)
    return sites


def promotion_of(sites: dict[tuple[str, str], SiteTally], bar: str, theta_star: float,
                 prior_weight: float = DEFAULT_PRIOR_WEIGHT, sessions: int = 0) -> Promotion:
    """Each site's state under `bar` from its tally."""
    judged = [judge(site, tool, t.lookups, t.used, len(t.tasks), round(t.score, 6), bar, theta_star, prior_weight)
              for (site, tool), t in sorted(sites.items())]
    return Promotion(bar=bar, theta_star=theta_star, prior_weight=prior_weight, sessions=sessions,  # type: ignore[arg-type]
                     unscored=default_state(bar), sites=judged)


Noted = tuple[EvidenceKey, float, bool, str]
"""One weighed candidate: its key, its score r·ρ, whether the agent used it, its task."""


def weighed_candidates(flow: Flow, sessions: Sequence[Session], theta: float = DEFAULT_THETA) -> list[Noted]:
    """Every candidate the flow (unscaled, every site serving) weighs replaying `sessions` from the record."""
    noting = NotedBindings(FlowRuntime(unpromoted(flow)), lambda tool, site, state, got: evidence_key(tool, site, got))
    engine = build_engine(noting, ReplayOptions(theta=theta, weigh=True, processes=1))
    out: list[Noted] = []
    for s in sessions:
        try:
            episode = prepare_session(s, None if s.header.manifest is not None else flow.manifest)
        except EpisodeError:
            continue
        walk = Walk(episode, engine, RecordSource(), weigh=True).run()
        task = s.header.task_id or s.session_id
        out.extend((noting.seen[(c.key, c.site)], c.reach * c.binding, c.used, task) for c in walk.candidates)
    return out


def agent_of(session: Session) -> str:
    return session.header.agent_model or "unknown"


def train_evidence(sessions: Sequence[Session], theta: float = DEFAULT_THETA) -> list[UseCount]:
    """The train split's counts of use: each agent's sessions weighed by a flow learned from the
    other agents' (every agent's, where it is the only one), as a new agent's flow is learned."""
    rows: list[Noted] = []
    agents = sorted({agent_of(s) for s in sessions})
    for agent in agents:
        own = [s for s in sessions if agent_of(s) == agent]
        others = [s for s in sessions if agent_of(s) != agent] or list(sessions)
        rows += weighed_candidates(learn(others), own, theta)
    return count_use(((k, q, u) for k, q, u, _ in rows), "train")


def evidence_promotion(evidence: UseEvidence, rows: Sequence[Noted], theta_star: float, sessions: int) -> Promotion:
    """The posterior bar's promotion: the evidence, and each (site, tool)'s state from its pooled counts."""
    factors, g = evidence.factors()
    pooled: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for c in evidence.counts:
        t = pooled[(c.site, c.tool)]
        t[0] += c.weighed
        t[1] += c.score
        t[2] += c.used
    tasks: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (tool, site, _), _q, _u, task in rows:
        tasks[(site, tool)].add(task)
    sites = []
    for (site, tool), (n, q, u) in sorted(pooled.items()):
        mean = q / n if n else 0.0
        posterior = mean * factor_of(n, q, u, evidence.site_prior, g)
        sites.append(SitePromotion(site=site, tool=tool, state="promoted" if posterior >= theta_star else "held",
                                   lookups=n, used=u, tasks=len(tasks[(site, tool)]), score=round(q, 6),
                                   posterior=round(posterior, 6)))
    return Promotion(bar="posterior", theta_star=theta_star, prior_weight=evidence.site_prior, sessions=sessions,
                     unscored="promoted", sites=sites, evidence=evidence)


def promote(flow: Flow, sessions: Sequence[Session], bar: str = "posterior", theta: float = DEFAULT_THETA,
            prior_weight: float = DEFAULT_PRIOR_WEIGHT, *, site_prior: float = DEFAULT_SITE_PRIOR,
            agent_prior: float = DEFAULT_AGENT_PRIOR,
            train: Sequence[UseCount] | None = None) -> tuple[Flow, CleanSessions]:
    """The flow with its promotion judged on the clean ones of `sessions`, and those sessions.

    `posterior`: the clean sessions' weighed candidates become the own counts of the flow's
    evidence (`flow/use_evidence.py`), beside `train` counts (or those the flow kept); `strict`:
    would-be lookups judged by the reference's bar (`prior_weight` is the old binary bar's P)."""
    judge("", "", 0, 0, 0, 0, bar, theta, prior_weight)  # a bad bar fails before any work
    clean = clean_sessions(sessions, flow)
    if bar == "posterior":
        kept = flow.promotion.evidence if flow.promotion is not None else None
        train_counts = list(train) if train is not None else (
            [c for c in kept.counts if c.role == "train"] if kept is not None else [])
        rows = weighed_candidates(flow, clean.sessions, theta)
        own = count_use((k, q, u) for k, q, u, _ in rows)
        evidence = UseEvidence(site_prior=site_prior, agent_prior=agent_prior, counts=train_counts + own)
        promotion = evidence_promotion(evidence, rows, theta, len(clean.sessions))
    else:
        sites = tally_sites(would_be_lookups(flow, clean.sessions, theta))
        promotion = promotion_of(sites, bar, theta, prior_weight, len(clean.sessions))
    return flow.model_copy(update={"promotion": promotion}), clean
