"""Does a speculator carry across harnesses? (paper §4.2, "Across harnesses")

The same model behaves differently under another harness's prompt and loop. For each test
agent, one speculator is learned from the train sessions of its own harness and one from the
other harnesses' agents (never its own model), both are replayed on the agent's same test
episodes, and the two are compared with a paired bootstrap over tasks: the difference, and the
share of the own harness's saved turns and detours that the other harnesses' speculator keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from pydantic import BaseModel

from stretto_core.flow.ir import learn
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.evaluate.measure.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED, format_interval
from stretto_core.evaluate.measure.metrics import DomainCosts, SpeculatorComparison, compare_speculators, merge_results
from stretto_core.evaluate.measure.tables import markdown_table
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.replay.episode import PreparedEpisode
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.sessions.model import Session
from stretto_core.serve.speculator import DEFAULT_THETA

OWN = "own harness"
OTHERS = "other harnesses"


@dataclass
class HarnessCase:
    """One test agent: its harness, its test episodes, and the train sessions of each source."""

    agent: str
    harness: str
    test: Sequence[PreparedEpisode]
    own_harness: Sequence[Session]
    """Train sessions run in the agent's harness (its own included)."""
    other_harnesses: Sequence[Session]
    """Train sessions of other harnesses' agents, the agent's own model left out."""


class HarnessRow(BaseModel):
    """One agent (or the pool of them): both speculators on the same tests, and what carries."""

    group: str
    agents: list[str]
    harnesses: list[str]
    own_sessions: int
    other_sessions: int
    comparison: SpeculatorComparison
    kept_saved: float | None
    """Turns the other harnesses' speculator saves, over the own harness's."""
    kept_detours: float | None


def _row(group: str, cases: Sequence[HarnessCase], own: ReplayResult, other: ReplayResult,
         costs: DomainCosts | None, draws: int, seed: int) -> HarnessRow:
    comparison = compare_speculators(own, other, costs, group=group, a_label=OWN, b_label=OTHERS,
                                     draws=draws, seed=seed)
    return HarnessRow(group=group, agents=[c.agent for c in cases], harnesses=sorted({c.harness for c in cases}),
                      own_sessions=sum(len(c.own_harness) for c in cases),
                      other_sessions=sum(len(c.other_harnesses) for c in cases), comparison=comparison,
                      kept_saved=other.turns_saved / own.turns_saved if own.turns_saved else None,
                      kept_detours=other.detours / own.detours if own.detours else None)


def cross_harness(group: str, cases: Sequence[HarnessCase], *, costs: DomainCosts | None = None,
                  theta: float = DEFAULT_THETA, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED,
                  on_case: Callable[[], None] | None = None) -> list[HarnessRow]:
    """Per agent with both sources, then pooled over them (`group`), at θ with the use speculator."""
    options = ReplayOptions(theta=theta, policy="use")
    rows: list[HarnessRow] = []
    kept: list[tuple[HarnessCase, ReplayResult, ReplayResult]] = []
    for case in cases:
        if case.own_harness and case.other_harnesses and case.test:
            own = replay_sessions(FlowRuntime(learn(list(case.own_harness))), case.test, options)
            other = replay_sessions(FlowRuntime(learn(list(case.other_harnesses))), case.test, options)
            kept.append((case, own, other))
            rows.append(_row(f"{group}: {case.agent} ({case.harness})", [case], own, other, costs, draws, seed))
        if on_case is not None:
            on_case()
    if len(kept) > 1:
        rows.append(_row(group, [c for c, _, _ in kept], merge_results([o for _, o, _ in kept]),
                         merge_results([x for _, _, x in kept]), costs, draws, seed))
    return rows


def render_cross_harness(rows: Sequence[HarnessRow]) -> str:
    """Each agent's (and the pool's) turns saved and detours from each source, and the difference."""
    def line(r: HarnessRow) -> dict[str, str]:
        c = r.comparison
        kept = "–" if r.kept_saved is None else f"{100 * r.kept_saved:.0f}%"
        kept_d = "–" if r.kept_detours is None else f"{100 * r.kept_detours:.0f}%"
        return {"Test agent": r.group,
                "Sessions (own / other)": f"{r.own_sessions:,} / {r.other_sessions:,}",
                "Turns saved, own harness": format_interval(c.a.turns_saved, 100, 1, "%"),
                "Other harnesses": format_interval(c.b.turns_saved, 100, 1, "%"),
                "Difference (points)": format_interval(c.difference.turns_saved, 100, 1, "", True),
                "Detours / episode (own / other)": (f"{c.a.detours_per_episode.point or 0:.2f} / "
                                                    f"{c.b.detours_per_episode.point or 0:.2f}"),
                "Kept: saved (detours)": f"{kept} ({kept_d})"}

    if not rows:
        return "(no test agent has train sessions both in its own harness and in another)"
    lines = [line(r) for r in rows]
    headers = list(lines[0])
    return markdown_table(lines, {h: h for h in headers}, right=headers[1:])
