"""The threshold sweep (paper Figure 4, Appendix B): what each speculator saves and costs at each θ.

θ* = δ/(β+δ) is where Proposition 3 puts the threshold; the sweep shows whether the utility
actually peaks there on these episodes, and how fast it falls past the peak for each speculator.
Both speculators are replayed at every threshold (`replay_thetas`, which reuses an episode's
replay wherever no decision in it would change), with the same flows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from pydantic import BaseModel

from stretto_core.evaluate.measure.metrics import Assignment, DomainCosts, merge_results
from stretto_core.evaluate.measure.tables import markdown_table
from stretto_core.evaluate.replay.run import ReplayOptions, replay_thetas
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.serve.speculator import POLICIES

THETAS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
"""The thresholds swept."""

Swept = dict[str, dict[float, ReplayResult]]
"""Per policy, per threshold, the replay of every episode."""


class SweepRow(BaseModel):
    """One speculator at one threshold, over one group's episodes."""

    group: str
    policy: str
    theta: float
    episodes: int
    llm_turns: int
    lookups: int
    used: int
    saved: int
    detours: int
    turns_saved: float | None
    detours_per_episode: float | None
    ceiling_share: float | None
    utility: float | None
    """Input tokens per episode at the group's costs, β·saved − δ·detours; None without costs."""


def sweep(assignments: Sequence[Assignment], thetas: Sequence[float] = THETAS,
          policies: Sequence[str] = POLICIES, options: ReplayOptions | None = None) -> Swept:
    """Replay every assignment at every threshold under each policy; merged per threshold."""
    options = options or ReplayOptions()
    out: Swept = {}
    for policy in policies:
        at = replace(options, policy=policy)
        parts = [replay_thetas(flow, episodes, thetas, at) for flow, episodes in assignments]
        out[policy] = {theta: merge_results([p[theta] for p in parts], config=replace(at, theta=theta).config())
                       for theta in sorted(set(float(t) for t in thetas))}
    return out


def sweep_rows(group: str, swept: Swept, costs: DomainCosts | None) -> list[SweepRow]:
    """The figures of each (policy, θ), in policy then θ order."""
    rows = []
    for policy, by_theta in swept.items():
        for theta, r in sorted(by_theta.items()):
            utility = None
            if costs is not None and r.episodes:
                utility = (costs.beta * r.turns_saved - costs.delta * r.detours) / r.episodes
            rows.append(SweepRow(
                group=group, policy=policy, theta=theta, episodes=r.episodes, llm_turns=r.llm_turns,
                lookups=r.lookups, used=r.used, saved=r.turns_saved, detours=r.detours,
                turns_saved=r.turns_saved / r.llm_turns if r.llm_turns else None,
                detours_per_episode=r.detours / r.episodes if r.episodes else None,
                ceiling_share=r.turns_saved / r.ceiling_turns if r.ceiling_turns else None, utility=utility))
    return rows


def best_theta(rows: Sequence[SweepRow], policy: str) -> float | None:
    """The threshold at which a policy's utility peaks (the lowest, on a tie); None without costs."""
    scored = [r for r in rows if r.policy == policy and r.utility is not None]
    if not scored:
        return None
    return max(scored, key=lambda r: (r.utility, -r.theta)).theta


def render_sweep(rows: Sequence[SweepRow]) -> str:
    """One line per (group, θ): each speculator's turns saved · detours per episode · utility."""
    by_key = {(r.group, r.theta, r.policy): r for r in rows}
    groups = list(dict.fromkeys(r.group for r in rows))
    keys = [(g, t) for g in groups for t in sorted({r.theta for r in rows if r.group == g})]

    def cell(r: SweepRow | None) -> str:
        if r is None or r.turns_saved is None:
            return "–"
        util = "" if r.utility is None else f" · {r.utility / 1e3:.2f}k"
        return f"{100 * r.turns_saved:.1f}% · {r.detours_per_episode:.2f}{util} ({r.lookups:,})"

    lines = [{"Group": g, "θ": f"{t:g}", "Next step": cell(by_key.get((g, t, "next"))),
              "Use before write": cell(by_key.get((g, t, "use")))} for g, t in keys]
    return (markdown_table(lines, {h: h for h in ("Group", "θ", "Next step", "Use before write")},
                           right=["θ", "Next step", "Use before write"])
            + "\n\nEach cell: turns saved · detours per episode · utility in k input tokens per episode (lookups).")
