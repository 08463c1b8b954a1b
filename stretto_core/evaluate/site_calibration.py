"""Counting each site's use on sessions the scoring flow did not learn from: the cross-fit behind `learn --recalibrate`.

A site's factor (`flow/site_calibration.py`) must come from lookups the flow scored without
having counted them, or every site would look calibrated. So the sessions are dealt into folds by
a hash of their task (their session id where no task is recorded), each fold is replayed from the
record with every candidate weighed, and a held-out agent's fold is scored by a flow learned from
the other agents' sessions of the other folds (from every agent's, where it is the only one), as
the bench learns a test agent's flow. Each weighed candidate adds to its site: one weighed, its
score r·ρ, and whether the agent called it before its next write.

Counting is what learning costs (in τ² airline 1.4 s of a learn's 1.6 s, the rest deriving α and
the tables), and the flows of a cross-fit learn the same sessions over and over: 5 folds × 11
agents learned 55 flows of about 80% of the sessions each. A flow's counts add (`flow.ir._add`:
merging halves is learning at once, which `learn --workers` relies on), so where the caller says
how a fold's flow counts (`count_flow`), each (agent, fold) cell's sessions are counted once and a
part's flow is its cells added and derived: the same flow, for the cost of one count of every
session and a derive per part.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any, Callable, Iterable, Sequence

from stretto_core.sessions.agents import agent_key
from stretto_core.evaluate.replay.episode import PreparedEpisode, prepare_sessions
from stretto_core.evaluate.replay.record import RecordSource
from stretto_core.evaluate.replay.run import ReplayOptions, build_engine
from stretto_core.evaluate.replay.walk import Walk
from stretto_core.flow.ir import Flow
from stretto_core.flow.stream import add_all
from stretto_core.flow.site_calibration import (DEFAULT_FLOOR, DEFAULT_PRIOR, SiteCalibration, SiteCount, SiteKey,
                                                 add_to, site_counts, site_key)
from stretto_core.progress import track
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.model import Session
from stretto_core.sessions.state import call_key

DEFAULT_FOLDS = 5


def fold_key(session: Session) -> str:
    """What keeps a session's fold: its task, else (a live recording has none) the session itself."""
    return session.header.task_id or session.session_id


def folds_by_hash(keys: Iterable[str], folds: int) -> dict[str, int]:
    """Each key's fold from a hash of the key alone (a task keeps its fold when tasks are added)."""
    return {k: int(hashlib.sha1(k.encode()).hexdigest(), 16) % folds for k in keys}


def cross_fit_parts(sessions: Sequence[Session], fold_of: dict[str, int], k: int,
                    other_agents: bool = True) -> list[tuple[list[Session], list[Session]]]:
    """Fold k's parts, (sessions a flow learns from, held-out sessions it replays): one for all,
    or one per held-out agent learning from the other agents' sessions of the other folds."""
    held = [s for s in sessions if fold_of[fold_key(s)] == k]
    rest = [s for s in sessions if fold_of[fold_key(s)] != k]
    if not other_agents:
        return [(rest, held)] if rest and held else []
    by_agent: dict[str, list[Session]] = defaultdict(list)
    for s in held:
        by_agent[agent_key(s.header.agent_model)].append(s)
    parts = []
    for agent, own in sorted(by_agent.items()):
        learn_from = [s for s in rest if agent_key(s.header.agent_model) != agent] or rest
        if learn_from:
            parts.append((learn_from, own))
    return parts


def noted_site(tool: str, site: str, state: Any, binding: Any) -> SiteKey:
    return site_key(tool, site, binding)


class NotedBindings:
    """A flow model that binds as the one it wraps and keeps `note(tool, site, state, binding)` of each
    binding it makes, by (call key, site): a replay's lookup rows and candidates carry both."""

    def __init__(self, model: Any, note: Callable[[str, str, Any, Any], Any] = noted_site) -> None:
        self.model, self.note = model, note
        self.seen: dict[tuple[str, str], Any] = {}

    def bind(self, tool: str, state: Any, site: str) -> Any:
        got = self.model.bind(tool, state, site)
        if got is not None:
            self.seen[(call_key(tool, got.arguments), site)] = self.note(tool, site, state, got)
        return got

    def __getattr__(self, name: str) -> Any:  # read_tools, reach, manifest, ...
        return getattr(self.model, name)


Weighed = tuple[SiteKey, float, bool]
"""One weighed candidate: its site, its score r·ρ, whether the agent used it."""


def weighed_candidates(pairs: Iterable[tuple[Any, Sequence[PreparedEpisode]]],
                       theta: float = DEFAULT_THETA) -> list[Weighed]:
    """Replay each (flow model, episodes) from the record with every candidate weighed."""
    out: list[Weighed] = []
    for model, episodes in pairs:
        noting = NotedBindings(model)
        engine = build_engine(noting, ReplayOptions(theta=theta, weigh=True, processes=1))
        for episode in episodes:
            walk = Walk(episode, engine, RecordSource(), weigh=True).run()
            out.extend((noting.seen[(c.key, c.site)], c.reach * c.binding, c.used) for c in walk.candidates)
    return out


def count_sites(weighed: Iterable[Weighed], floor: float = DEFAULT_FLOOR) -> list[SiteCount]:
    """The candidates scored at least `floor`, counted by site, sorted."""
    totals: dict[SiteKey, list[float]] = {}
    for key, score, used in weighed:
        if score >= floor:
            add_to(totals, key, 1.0, score, used)
    return site_counts(totals)


CountFlow = Callable[[Sequence[Session]], Flow]
"""Counts sessions into an underived flow, as the flow being calibrated was counted (`flow.ir.count_sessions`)."""


class CellFlows:
    """Fold flows as sums of (agent, fold) cells, each cell's sessions counted once (module docstring)."""

    def __init__(self, sessions: Sequence[Session], fold_of: dict[str, int], count_flow: CountFlow) -> None:
        cells: dict[tuple[str, int], list[Session]] = defaultdict(list)
        for s in sessions:
            cells[(agent_key(s.header.agent_model), fold_of[fold_key(s)])].append(s)
        self.counted = {cell: count_flow(part) for cell, part in sorted(cells.items())}
        self.cell_of = {s.session_id: cell for cell, part in cells.items() for s in part}
        self._blocks: dict[tuple[str, tuple[int, ...]], Flow] = {}

    def _block(self, agent: str, folds: tuple[int, ...]) -> Flow:
        """One agent's cells of these folds added (kept: every part that leaves the same fold out shares it)."""
        if (agent, folds) not in self._blocks:
            self._blocks[(agent, folds)] = add_all([self.counted[(agent, k)] for k in folds])
        return self._blocks[(agent, folds)]

    def learn(self, learn_from: Sequence[Session]) -> Flow:
        """The flow of `learn_from` (whole cells, as `cross_fit_parts` makes them), derived."""
        by_agent: dict[str, list[int]] = defaultdict(list)
        for agent, k in sorted({self.cell_of[s.session_id] for s in learn_from}):
            by_agent[agent].append(k)
        total = add_all([self._block(agent, tuple(folds)) for agent, folds in sorted(by_agent.items())])
        return total.model_copy().derive()  # a shallow copy: `derive` sets the derived parts, never a kept cell's


def cross_fit(sessions: Sequence[Session], learn_flow: Callable[[Sequence[Session]], Flow],
              folds: int = DEFAULT_FOLDS, model_of: Callable[[Flow], Any] = FlowRuntime,
              theta: float = DEFAULT_THETA, count_flow: CountFlow | None = None) -> list[Weighed]:
    """Every candidate weighed in each fold by a flow that did not learn it (module docstring).

    `count_flow`: how `learn_flow` counts, when it is counting then deriving; each cell is then
    counted once and the parts' flows added from the cells."""
    fold_of = folds_by_hash(sorted({fold_key(s) for s in sessions}), folds)
    if count_flow is not None:
        learn_flow = CellFlows(sessions, fold_of, count_flow).learn
    out: list[Weighed] = []
    for k in track(range(folds), "calibrating sites", total=folds, unit="fold"):
        pairs = [(model_of(learn_flow(learn_from)), prepare_sessions(held))
                 for learn_from, held in cross_fit_parts(sessions, fold_of, k)]
        out.extend(weighed_candidates(pairs, theta))
    return out


def calibrate_sites(sessions: Sequence[Session], learn_flow: Callable[[Sequence[Session]], Flow],
                    folds: int = DEFAULT_FOLDS, prior: float = DEFAULT_PRIOR, floor: float = DEFAULT_FLOOR,
                    model_of: Callable[[Flow], Any] = FlowRuntime,
                    theta: float = DEFAULT_THETA, count_flow: CountFlow | None = None) -> SiteCalibration:
    """Each site's use, counted by `folds`-fold cross-fitting over `sessions`.

    `learn_flow` learns a fold's flow (as the flow being calibrated was learned); `model_of`
    serves it (as the calibrated flow will be served, before its calibration); `count_flow`, where
    given, counts as `learn_flow` does, so each session is counted once (`cross_fit`).
    """
    weighed = cross_fit(sessions, learn_flow, folds, model_of, theta, count_flow)
    return SiteCalibration(prior=prior, floor=floor, folds=folds, sites=count_sites(weighed, floor))
