"""Table 3's figures from a replay's episode rows, with intervals from a bootstrap over tasks.

Turns saved (a share of LLM turns), detours per episode, the share of the read-only ceiling
(turns saved over ceiling turns) and the utility per episode in the agent's input tokens,
β·saved − δ·detours per episode (Proposition 3), at a domain's costs. Two speculators replayed
on the same episodes are compared on the tasks both replayed, each difference with a paired
interval.

Costs: β and δ counted from the recorded sessions' token usage (`measure/costs.py`) where the
episodes report it, else the paper's counted values for the τ²-bench domain (Appendix B); every
row says which it used. Where neither exists, utility is left out rather than guessed.
"""

from __future__ import annotations

from typing import Callable, Literal, Sequence, Union

import numpy as np
from pydantic import BaseModel

from stretto_core.errors import StrettoError
from stretto_core.evaluate.measure.bootstrap import (DEFAULT_DRAWS, DEFAULT_SEED, Clusters, Interval, Stat, bootstrap,
                                            format_interval, paired_difference, ratio)
from stretto_core.evaluate.measure.costs import AppCosts, theta_star
from stretto_core.evaluate.measure.tables import markdown_table
from stretto_core.evaluate.replay.run import EngineSource, ReplayOptions, replay_sessions
from stretto_core.evaluate.replay.episode import PreparedEpisode
from stretto_core.evaluate.replay.rows import EpisodeRow, ReplayConfig, ReplayResult
from stretto_core.sessions.model import Session

PAPER_COSTS: dict[str, tuple[float, float]] = {
    "retail": (5820.0, 2470.0),
    "airline": (7050.0, 1020.0),
    "telecom": (8930.0, 1180.0),
}
"""τ²-bench's β and δ per domain as the paper counted them (Appendix B), in input tokens."""

METRICS = ("turns_saved", "detours_per_episode", "ceiling_share", "utility")

TaskKey = tuple[str, str]


class DomainCosts(BaseModel):
    """The β and δ a domain's utility is priced at, and where they come from."""

    beta: float
    delta: float
    theta_star: float
    source: Literal["counted", "paper", "given"]
    note: str


def costs_for(app: str, counted: AppCosts | None) -> DomainCosts | None:
    """Counted costs when both β and δ could be counted, else the paper's for the domain, else None."""
    if counted is not None and counted.beta is not None and counted.delta is not None:
        note = (f"counted: β over {counted.ceiling_turns:,} ceiling turns and δ over {counted.detours:,} "
                f"detours, in {counted.episodes_with_tokens:,} of {counted.episodes:,} episodes reporting tokens")
        return DomainCosts(beta=counted.beta, delta=counted.delta, source="counted", note=note,
                           theta_star=theta_star(counted.beta, counted.delta) or 0.0)
    domain = app.split("/")[-1]
    if domain in PAPER_COSTS:
        beta, delta = PAPER_COSTS[domain]
        why = "no episode reports input tokens" if counted is None or counted.beta is None else "no detour to count δ over"
        return DomainCosts(beta=beta, delta=delta, source="paper", theta_star=theta_star(beta, delta) or 0.0,
                           note=f"the paper's {domain} costs (Appendix B): {why}")
    return None


def given_costs(beta: float, delta: float) -> DomainCosts:
    """Costs the user supplied."""
    if beta < 0 or delta < 0 or beta + delta <= 0:
        raise StrettoError(f"β and δ must be non-negative and not both zero, not β={beta}, δ={delta}")
    return DomainCosts(beta=beta, delta=delta, theta_star=delta / (beta + delta), source="given",
                       note=f"given: β = {beta:,.0f}, δ = {delta:,.0f}")


def task_key(row: EpisodeRow) -> TaskKey:
    """The task an episode ran: the bootstrap's unit. An episode without a task is its own."""
    return (row.app or "", row.task_id if row.task_id else f"session:{row.session_id}")


Assignment = tuple[EngineSource, Sequence[Union[Session, PreparedEpisode]]]
"""Episodes and the flow that serves them (e.g. each test agent's, learned from other agents)."""


def replay_each(assignments: Sequence[Assignment], options: ReplayOptions) -> ReplayResult:
    """Replay each assignment's episodes with its own flow, as one replay (rows in order)."""
    return merge_results([replay_sessions(flow, episodes, options) for flow, episodes in assignments],
                         config=options.config())


def by_app(result: ReplayResult) -> dict[str, ReplayResult]:
    """A replay's rows split per app, each part with its own totals."""
    apps = sorted({r.app or "(no app)" for r in result.episode_rows})
    parts = {}
    for app in apps:
        sessions = {r.session_id for r in result.episode_rows if (r.app or "(no app)") == app}
        parts[app] = ReplayResult(
            config=result.config, episode_rows=[r for r in result.episode_rows if r.session_id in sessions],
            lookup_rows=[r for r in result.lookup_rows if r.session_id in sessions],
            weighed_rows=[r for r in result.weighed_rows if r.session_id in sessions]).totals_from_rows()
    return parts


def merge_results(results: Sequence[ReplayResult], config: ReplayConfig | None = None) -> ReplayResult:
    """One replay of all the episodes of several (e.g. each agent's, served by its own flow)."""
    if not results and config is None:
        raise ValueError("merge_results needs at least one replay or a config")
    merged = ReplayResult(config=config or results[0].config)
    for result in results:
        merged.episode_rows.extend(result.episode_rows)
        merged.lookup_rows.extend(result.lookup_rows)
        merged.weighed_rows.extend(result.weighed_rows)
    return merged.totals_from_rows()


class MetricSet(BaseModel):
    """One speculator's figures over some episodes (or the difference of two: b − a)."""

    episodes: int
    llm_turns: int
    turns_saved: Interval
    """A share of LLM turns (a difference: in shares, i.e. points / 100)."""
    detours_per_episode: Interval
    ceiling_share: Interval
    utility: Interval | None
    """Input tokens per episode, β·saved − δ·detours; None without costs."""
    lookups: int = 0
    used: int = 0
    saved: int = 0
    detours: int = 0
    transient: int = 0
    """Lookups that matched a call met by a transient failure: reported apart, never saved."""


class EpisodeSums:
    """Per-task sums of the counts every metric is a ratio of."""

    def __init__(self, rows: Sequence[EpisodeRow], clusters: Clusters) -> None:
        self.rows = rows
        self.clusters = clusters

        def per_task(get: Callable[[EpisodeRow], float]) -> np.ndarray:
            return clusters.sums([get(r) for r in rows])

        self.turns = per_task(lambda r: r.llm_turns)
        self.saved = per_task(lambda r: r.turns_saved)
        self.detours = per_task(lambda r: r.detours)
        self.ceiling = per_task(lambda r: r.ceiling_turns)
        self.episodes = per_task(lambda r: 1)

    def stats(self, costs: DomainCosts | None) -> dict[str, Stat | None]:
        utility: Stat | None = None
        if costs is not None:
            value = costs.beta * self.saved - costs.delta * self.detours
            utility = ratio(value, self.episodes)
        return {"turns_saved": ratio(self.saved, self.turns),
                "detours_per_episode": ratio(self.detours, self.episodes),
                "ceiling_share": ratio(self.saved, self.ceiling),
                "utility": utility}


def _sums(result: ReplayResult, tasks: Sequence[TaskKey] | None) -> EpisodeSums:
    rows = result.episode_rows
    if tasks is not None:
        wanted = set(tasks)
        rows = [r for r in rows if task_key(r) in wanted]
    return EpisodeSums(rows, Clusters.of([task_key(r) for r in rows], order=tasks))


def _metric_set(sums: EpisodeSums, intervals: dict[str, Interval | None]) -> MetricSet:
    rows = sums.rows
    return MetricSet(episodes=len(rows), llm_turns=sum(r.llm_turns for r in rows),
                     lookups=sum(r.lookups for r in rows), used=sum(r.used for r in rows),
                     saved=sum(r.turns_saved for r in rows), detours=sum(r.detours for r in rows),
                     transient=sum(r.transient for r in rows),
                     turns_saved=intervals["turns_saved"], detours_per_episode=intervals["detours_per_episode"],
                     ceiling_share=intervals["ceiling_share"], utility=intervals["utility"])


def measure(result: ReplayResult, costs: DomainCosts | None = None, draws: int = DEFAULT_DRAWS,
            seed: int = DEFAULT_SEED, tasks: Sequence[TaskKey] | None = None) -> MetricSet:
    """A replay's figures with intervals (over `tasks` only, when given)."""
    sums = _sums(result, tasks)
    n = sums.clusters.size
    intervals = {name: (bootstrap(stat, n, draws, seed) if stat is not None else None)
                 for name, stat in sums.stats(costs).items()}
    return _metric_set(sums, intervals)


class SpeculatorComparison(BaseModel):
    """Two speculators on the same tasks: each one's figures and b − a, paired."""

    group: str
    tasks: int
    a_label: str
    b_label: str
    a: MetricSet
    b: MetricSet
    difference: MetricSet
    costs: DomainCosts | None = None


def shared_tasks(a: ReplayResult, b: ReplayResult) -> list[TaskKey]:
    """The tasks both replays ran, in a fixed order."""
    return sorted({task_key(r) for r in a.episode_rows} & {task_key(r) for r in b.episode_rows})


def compare_speculators(a: ReplayResult, b: ReplayResult, costs: DomainCosts | None = None, *,
                        group: str = "All", a_label: str = "next step", b_label: str = "use before write",
                        draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> SpeculatorComparison:
    """Table 3's three rows for one group: a, b and b − a over the tasks both replayed."""
    tasks = shared_tasks(a, b)
    sums_a, sums_b = _sums(a, tasks), _sums(b, tasks)
    stats_a, stats_b = sums_a.stats(costs), sums_b.stats(costs)
    n = len(tasks)
    one = {name: (bootstrap(s, n, draws, seed) if s is not None else None) for name, s in stats_a.items()}
    two = {name: (bootstrap(s, n, draws, seed) if s is not None else None) for name, s in stats_b.items()}
    diff: dict[str, Interval | None] = {}
    for name in METRICS:
        sa, sb = stats_a[name], stats_b[name]
        diff[name] = paired_difference(sa, sb, n, draws, seed) if sa is not None and sb is not None else None
    set_a, set_b = _metric_set(sums_a, one), _metric_set(sums_b, two)
    difference = _metric_set(sums_b, diff).model_copy(update={
        "episodes": set_b.episodes, "lookups": set_b.lookups - set_a.lookups, "used": set_b.used - set_a.used,
        "saved": set_b.saved - set_a.saved, "detours": set_b.detours - set_a.detours,
        "transient": set_b.transient - set_a.transient})
    return SpeculatorComparison(group=group, tasks=n, a_label=a_label, b_label=b_label, a=set_a, b=set_b,
                                difference=difference, costs=costs)


def render_comparisons(rows: Sequence[SpeculatorComparison]) -> str:
    """Table 3: per group, each speculator's row and the difference, with 95% intervals."""
    lines = []
    for c in rows:
        for label, m, signed in ((c.a_label, c.a, False), (c.b_label, c.b, False), ("difference", c.difference, True)):
            unit = "" if signed else "%"
            lines.append({
                "Group": c.group if label == c.a_label else "",
                "Speculator": label,
                "Turns saved": format_interval(m.turns_saved, 100, 1, unit, signed),
                "Detours / episode": format_interval(m.detours_per_episode, 1, 2, "", signed),
                "Share of ceiling": format_interval(m.ceiling_share, 100, 1, unit, signed),
                "Utility / episode (k tokens)": format_interval(m.utility, 1e-3, 2, "", signed),
                "Lookups (used)": (f"{m.lookups:+,} ({m.used:+,})" if signed else f"{m.lookups:,} ({m.used:,})"),
                "Transient (apart)": f"{m.transient:+,}" if signed else f"{m.transient:,}",
                "Episodes": f"{m.episodes:,}" if not signed else "",
            })
    columns = {h: h for h in (lines[0] if lines else {"Group": ""})}
    right = [h for h in columns if h not in ("Group", "Speculator")]
    return markdown_table(lines, columns, right=right)
