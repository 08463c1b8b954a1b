"""A flow that learns as sessions arrive: the agent's own counts added exactly, a prior that gives way.

Counts add (`flow.ir.merge`), so a staged flow holds the agent's own sessions' counts, and each
stage adds only the new sessions' (`Staged.add`): the staged flow after n sessions is, byte for
byte, the flow learned at once from those n. Other agents' sessions enter as a power prior whose
weight falls as the agent's own arrive, w(n) = w0·k/(k+n) sessions in all (`learn/served.py`'s
`prior_weight_at`), so the served flow is the own counts plus the prior's counts times
w(n)/(prior sessions), derived: exactly `flow.ir.learn(own, prior=..., prior_weight=w(n))`.

What a served session adds is the rule of `learn/served.py` (`teaching_sessions`); a caller
(`stretto flow stage`) hands this module the sessions as the rule teaches them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from stretto_core.errors import StrettoError
from stretto_core.flow.ir import Flow, SessionCounter, _add, count_sessions, manifest_of_sessions
from stretto_core.learn.served import (DEFAULT_PRIOR_HALF, DEFAULT_PRIOR_SESSIONS, DEFAULT_RULE, prior_weight_at,
                                       taught_views)
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import Session


def own_sessions_of(flow: Flow | None) -> int:
    """How many of the agent's own sessions a staged flow counted (its `data` sources)."""
    if flow is None:
        return 0
    return sum(s.sessions for s in flow.provenance.sources if s.role == "data")


@dataclass
class Staged:
    """The agent's own counts so far, and the prior (its counts at weight 1) beside them."""

    own: Flow | None
    prior: Flow | None = None
    w0: float = DEFAULT_PRIOR_SESSIONS
    half: float = DEFAULT_PRIOR_HALF
    manifest: ToolManifest | None = None

    @property
    def sessions(self) -> int:
        return own_sessions_of(self.own)

    def add(self, sessions: Sequence[Session]) -> "Staged":
        """Count only the new sessions and add them (exact: counts are sums)."""
        if not sessions:
            return self
        manifest = self.manifest or (self.own.manifest if self.own is not None else None)
        manifest = manifest_of_sessions(sessions, manifest)
        new = count_sessions(sessions, manifest)
        self.own = new if self.own is None else _add(self.own, new)
        return self

    def prior_weight(self) -> float:
        """What the prior weighs as now, in sessions."""
        return prior_weight_at(self.sessions, self.w0, self.half)

    def flow(self) -> Flow:
        """The flow to serve: own counts plus the prior at its weight now, derived."""
        if self.own is None and self.prior is None:
            raise StrettoError("nothing staged: no sessions of the agent's own and no prior")
        if self.prior is None or self.prior.provenance.sources == []:
            assert self.own is not None
            return self.own.model_copy(deep=True).derive()
        prior_sessions = sum(s.sessions for s in self.prior.provenance.sources)
        weight = self.prior_weight() / prior_sessions if prior_sessions else 0.0
        if self.own is None:
            return _add(_empty_like(self.prior), self.prior, weight).derive()
        return _add(self.own, self.prior, weight).derive()


def _empty_like(flow: Flow) -> Flow:
    """A flow of no sessions, with the manifest and features of `flow` (the prior alone serves)."""
    return count_sessions([], flow.manifest, features=flow.features)


def prior_counts(sessions: Sequence[Session], manifest: ToolManifest | None = None) -> Flow:
    """Other agents' sessions counted at weight 1, as a prior (`role` prior)."""
    return count_sessions(sessions, manifest_of_sessions(sessions, manifest), role="prior")


def count_taught(sessions: Sequence[Session], manifest: ToolManifest | None = None,
                 rule: str = DEFAULT_RULE) -> Flow | None:
    """The counts of new sessions as `rule` teaches them (`learn/served.py`), counted as
    `flow/stream.count_files` counts them; None when none of them teaches."""
    taught = list(taught_views(sessions, rule))
    if not taught:
        return None
    counter = SessionCounter(manifest_of_sessions([v for v, _ in taught], manifest))
    for view, fingerprint in taught:
        counter.add(view, fingerprint)
    return counter.flow()
