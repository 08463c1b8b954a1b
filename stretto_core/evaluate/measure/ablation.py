"""The ablation table: each variant of `stretto_core.evaluate.variants` against the full speculator.

Per domain, each test agent's flow is learned from the domain's train sessions as the bench
learns it (`bench_plan.learning_sessions`: other agents first, with its fallbacks), and every
variant replays the same test episodes from the record at θ. Each variant's row: turns saved,
share of the read-only ceiling, detours per episode, and its difference to `full` with a 95%
interval from a paired bootstrap over tasks; and the calibration error (ECE) of its own score
over the lookups it weighed. Utility (β·saved − δ·detours per episode) is priced at the paper's
counted τ²-bench costs (Appendix B) where it has them, and left out elsewhere.
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel

from stretto_core.evaluate.variants import VARIANTS, Variant, VariantFlows
from stretto_core.evaluate.measure.bench_data import Corpus, agent_key
from stretto_core.evaluate.measure.bench_plan import learning_sessions
from stretto_core.evaluate.measure.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED, Interval, format_interval
from stretto_core.evaluate.measure.calibration import ece
from stretto_core.evaluate.measure.metrics import Assignment, MetricSet, compare_speculators, costs_for, replay_each
from stretto_core.evaluate.measure.tables import markdown_table
from stretto_core.evaluate.replay.run import ReplayOptions
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.serve.speculator import DEFAULT_THETA


class AblationRow(BaseModel):
    """One variant in one domain, and its difference to the full speculator (variant − full)."""

    domain: str
    variant: str
    label: str
    tasks: int
    episodes: int
    lookups: int
    used: int
    metrics: MetricSet
    difference: MetricSet | None
    """None for `full` itself."""
    ece: float | None
    """Calibration error of the variant's own score (r·ρ, or p·ρ for `next`) over its lookups weighed."""


def assignments_for(corpus: Corpus, domain: str, v: Variant, flows: VariantFlows) -> list[Assignment]:
    """Each test agent's episodes with the variant's model, learned from its train sessions."""
    by_agent: dict[str, list] = {}
    for s in corpus.on("test", domain):
        by_agent.setdefault(agent_key(s.header.agent_model), []).append(s)
    out: list[Assignment] = []
    for agent in sorted(by_agent):
        sessions, _, _ = learning_sessions(corpus, domain, agent)
        if sessions:
            out.append((flows.model(sessions, v), prepare_sessions(by_agent[agent])))
    return out


def replay_variant(corpus: Corpus, domain: str, v: Variant, flows: VariantFlows,
                   theta: float = DEFAULT_THETA) -> ReplayResult:
    assignments = assignments_for(corpus, domain, v, flows)
    return replay_each(assignments, ReplayOptions(theta=theta, policy=v.policy, weigh=True, split="test"))


def _ece(result: ReplayResult, policy: str) -> float | None:
    rows = result.weighed_rows
    scores = [r.score_next if policy == "next" else r.score_use for r in rows]
    return ece(scores, [r.used for r in rows])


def ablate_domain(corpus: Corpus, domain: str, variants: Sequence[Variant] = VARIANTS,
                  theta: float = DEFAULT_THETA, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED,
                  flows: VariantFlows | None = None) -> list[AblationRow]:
    """Every variant on the domain's test episodes; the first row is `full`."""
    flows = flows or VariantFlows()
    full_v = next(v for v in VARIANTS if v.name == "full")
    replays = {v.name: replay_variant(corpus, domain, v, flows, theta) for v in (full_v, *variants)}
    costs = costs_for(domain.split(" ")[0], None)  # the paper's τ² costs (App. B) where it has them
    rows = []
    for v in (full_v, *[v for v in variants if v.name != "full"]):
        c = compare_speculators(replays["full"], replays[v.name], costs, group=domain, a_label="full", b_label=v.name,
                                draws=draws, seed=seed)
        rows.append(AblationRow(domain=domain, variant=v.name, label=v.label, tasks=c.tasks, episodes=c.b.episodes,
                                lookups=c.b.lookups, used=c.b.used, metrics=c.b,
                                difference=None if v.name == "full" else c.difference,
                                ece=_ece(replays[v.name], v.policy)))
    return rows


def _diff(i: Interval | None, scale: float, digits: int) -> str:
    return format_interval(i, scale, digits, "", signed=True)


def render_ablation(rows: Sequence[AblationRow]) -> str:
    """One block per domain: each variant's figures, then its difference to full with 95% intervals."""
    lines = []
    last = None
    for r in rows:
        m, d = r.metrics, r.difference
        lines.append({
            "Domain": r.domain if r.domain != last else "",
            "Variant": r.label,
            "Turns saved": format_interval(m.turns_saved, 100, 1, "%"),
            "Share of ceiling": format_interval(m.ceiling_share, 100, 1, "%"),
            "Detours / ep.": format_interval(m.detours_per_episode, 1, 2),
            "Δ turns (pts)": _diff(d.turns_saved, 100, 1) if d else "",
            "Δ ceiling (pts)": _diff(d.ceiling_share, 100, 1) if d else "",
            "Δ detours / ep.": _diff(d.detours_per_episode, 1, 2) if d else "",
            "Δ utility / ep. (k tok.)": _diff(d.utility, 1e-3, 2) if d else "",
            "ECE": "–" if r.ece is None else f"{r.ece:.3f}",
            "Lookups (used)": f"{r.lookups:,} ({r.used:,})",
        })
        last = r.domain
    columns = {h: h for h in (lines[0] if lines else {"Domain": ""})}
    return markdown_table(lines, columns, right=[h for h in columns if h not in ("Domain", "Variant")])
