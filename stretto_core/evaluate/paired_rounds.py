"""The served loop scored paired: has the flow relearned from served sessions unlearned anything?

A round of the served loop (`served_loop.py`) scores a flow on its own batch of 4–66 episodes, and
on so few the unserved reference itself moves by more than 10% from round to round: the strict
criterion (every round within 10% of the reference) cannot be resolved there. The question it
asks is narrower: does the flow a rule relearned from served sessions serve as well as the flow
learned from the same sessions unserved? So both flows are replayed on the *same*, larger set of
sessions neither learned from, and only their difference is judged: what the episodes happen to
hold moves both alike and cancels.

Cross-fitted: the deployment's sessions are cut into `folds` by a hash of the session id (each
fold in arrival order). The loop runs on all folds but one, and after each round r its flow and
the reference (learned from the same batches 0..r as recorded) are both replayed on the fold left
out; every fold takes its turn, so each round's pair is scored on every session of the deployment,
each by flows that never learned from it. The difference (rule − reference, as a share of the
reference) gets a 95% interval from the same draws of tasks for both (`measure/bootstrap.py`), and
a round is judged *within* 10% when its whole interval is, *off* when its whole interval is beyond
10%, and *unresolved* when the interval straddles the line.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Literal, Sequence

import numpy as np

from stretto_core.evaluate.measure.bootstrap import Clusters, Interval, bootstrap
from stretto_core.evaluate.round_spread import WITHIN
from stretto_core.evaluate.served_loop import (HOLDOUT_FRACTION, REFERENCE, RoundScore, batches_of, rule_rounds,
                                               serve_batch)
from stretto_core.flow.ir import Flow, learn
from stretto_core.learn.missed_uses import ToolRecall
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.model import Session

DEFAULT_FOLDS = 2
"""Folds of the cross-fit: each loop learns from half the deployment and is scored on the other half."""

Verdict = Literal["within", "off", "unresolved"]


@dataclass
class PairedRound:
    """A rule's flow after one round and the reference's, replayed on the same sessions."""

    rule: RoundScore
    reference: RoundScore

    def differences(self) -> tuple[Interval, Interval]:
        """(saved, detours): rule − reference as a share of the reference, with paired 95% intervals."""
        return relative_difference(self.rule, self.reference)


def _per_task(rule: RoundScore, reference: RoundScore) -> tuple[Clusters, np.ndarray, np.ndarray, np.ndarray,
                                                                  np.ndarray]:
    """Per-task sums of saved and detours for both replays, which must be of the same episodes."""
    tasks = [t for t, _, _ in reference.by_episode]
    if [t for t, _, _ in rule.by_episode] != tasks:
        raise ValueError("a paired score needs both flows replayed on the same episodes, in the same order")
    clusters = Clusters.of(tasks)
    return (clusters, clusters.sums([s for _, s, _ in rule.by_episode]),
            clusters.sums([s for _, s, _ in reference.by_episode]),
            clusters.sums([d for _, _, d in rule.by_episode]), clusters.sums([d for _, _, d in reference.by_episode]))


def _share_off(ours: np.ndarray, theirs: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """(Σ ours − Σ theirs) / Σ theirs over drawn tasks; both 0 is no difference, theirs alone 0 is unbounded."""
    def stat(w: np.ndarray) -> np.ndarray:
        a, b = w @ ours, w @ theirs
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(b > 0, a / b - 1.0, np.where(a > 0, np.inf, 0.0))
    return stat


def relative_difference(rule: RoundScore, reference: RoundScore) -> tuple[Interval, Interval]:
    """(saved, detours) of the rule's replay against the reference's on the same episodes: the
    difference as a share of the reference's total, each with its paired 95% interval."""
    if not reference.by_episode:
        return Interval(point=None), Interval(point=None)
    clusters, saved, saved_ref, detours, detours_ref = _per_task(rule, reference)
    return (bootstrap(_share_off(saved, saved_ref), clusters.size),
            bootstrap(_share_off(detours, detours_ref), clusters.size))


def verdict(difference: Interval, share: float = WITHIN) -> Verdict:
    """`within` when the whole interval is within ±share, `off` when it is wholly beyond, else `unresolved`."""
    if difference.point is None:
        return "unresolved"
    low = difference.point if difference.low is None else difference.low
    high = difference.point if difference.high is None else difference.high
    if -share <= low and high <= share:
        return "within"
    if low > share or high < -share:
        return "off"
    return "unresolved"


def folds_of(sessions: Sequence[Session], folds: int = DEFAULT_FOLDS) -> list[list[Session]]:
    """The sessions cut into `folds` by a hash of the session id, each fold in the order given."""
    if folds < 2:
        raise ValueError(f"a cross-fit needs 2 folds or more, not {folds}")
    out: list[list[Session]] = [[] for _ in range(folds)]
    for s in sessions:
        out[int(hashlib.sha1(s.session_id.encode()).hexdigest()[:8], 16) % folds].append(s)
    return out


def _joined(a: RoundScore | None, b: RoundScore) -> RoundScore:
    """Two replays' scores as one (episodes of the second after the first)."""
    if a is None:
        return b
    return RoundScore(episodes=a.episodes + b.episodes, llm_turns=a.llm_turns + b.llm_turns, saved=a.saved + b.saved,
                      detours=a.detours + b.detours, lookups=a.lookups + b.lookups,
                      by_episode=a.by_episode + b.by_episode)


def run_paired(sessions: Sequence[Session], rules: Sequence[str], rounds: int = 5, theta: float = DEFAULT_THETA,
               learn_flow: Callable[[Sequence[Session]], Flow] = learn, folds: int = DEFAULT_FOLDS,
               holdout_fraction: float = HOLDOUT_FRACTION, env: bool = False,
               recall_of: Callable[[Sequence[Session]], ToolRecall] | None = None,
               ) -> dict[str, list[PairedRound]]:
    """Per rule, each round's flow and the reference's replayed on the folds they did not learn from."""
    scored: dict[str, list[RoundScore | None]] = {name: [None] * rounds for name in [REFERENCE, *rules]}
    cut = folds_of(sessions, folds)
    order = {s.session_id: n for n, s in enumerate(sessions)}
    for held, evaluation in enumerate(cut):
        learning = [s for i, fold in enumerate(cut) if i != held for s in fold]
        if not evaluation or len(learning) < rounds + 1:
            continue
        batches = batches_of(sorted(learning, key=lambda s: order[s.session_id]), rounds)
        for r in range(1, rounds + 1):
            flow = learn_flow([s for b in batches[:r + 1] for s in b])
            score = serve_batch(flow, evaluation, theta, env=env)[1]
            scored[REFERENCE][r - 1] = _joined(scored[REFERENCE][r - 1], score)
        for rule in rules:
            for r, (_, flow) in enumerate(rule_rounds(batches, rule, theta, learn_flow, holdout_fraction, env,
                                                        recall_of)):
                scored[rule][r] = _joined(scored[rule][r], serve_batch(flow, evaluation, theta, env=env)[1])
    reference = [s or RoundScore() for s in scored[REFERENCE]]
    return {rule: [PairedRound(s or RoundScore(), ref) for s, ref in zip(scored[rule], reference)] for rule in rules}
