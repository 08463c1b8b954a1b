"""The bench's results folder: JSON rows, replays, PNG plots, and a README.md gathering the tables.

Every figure the README prints is in a JSON file beside it (`json/`), and every replay behind
them is in `replays/` with its rows, so any number can be recomputed from the folder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, Field

from stretto_core.errors import StrettoError
from stretto_core.evaluate.measure.ablation import AblationRow, render_ablation
from stretto_core.evaluate.measure.bench_plan import FALLBACK_MARK, LearnSource
from stretto_core.evaluate.measure.bootstrap import format_interval
from stretto_core.evaluate.measure.bench_stages import Agreement, CurveCase, LeadAgreement
from stretto_core.evaluate.measure.calibration import CalibrationRow, render_calibration
from stretto_core.evaluate.measure.ceiling import CeilingReport, render_table
from stretto_core.evaluate.measure.costs import AppCosts, render_costs
from stretto_core.evaluate.measure.crossharness import HarnessRow, render_cross_harness
from stretto_core.evaluate.measure.curves import CurvePoint, CurveRow, render_curves
from stretto_core.evaluate.measure.metrics import DomainCosts, SpeculatorComparison, render_comparisons
from stretto_core.evaluate.measure.plots import plot_curves, plot_reliability, plot_sweep
from stretto_core.evaluate.measure.sweep import SweepRow, render_sweep
from stretto_core.evaluate.measure.tables import markdown_table, pct
from stretto_core.evaluate.replay.inputs import save_replay
from stretto_core.evaluate.replay.rows import ReplayResult

SPLIT_RULE = ("Nothing is learned from a test task. τ²-bench: its official train/test split "
              "(`tau2/domains/<domain>/split_tasks.json`; `unverified-*` episodes on neither side). "
              "AgentDojo and WorkBench ship none: tasks are split by a hash of (app, task) with seed 0, "
              "40% of tasks held out. The frozen split is `split.json`.")


PAPER = {
    "costs": "Paper (Appendix B): retail β 5,820, δ 2,470, θ* 0.298; airline 7,050 / 1,020, θ* 0.13; telecom "
             "8,930 / 1,180, θ* 0.12; solo telecom θ* 0.06.",
    "table3": "Paper (nine 2025–26 agents, learned from four 2025 runs): retail 26.1% → 29.6% of turns "
              "(+3.5 [2.3, 4.9]), 76.2% → 86.4% of the ceiling (+10.2 [6.7, 14.2]), +0.16 detours, +1.6k tokens; "
              "airline +0.1 [0.0, 0.3]; telecom +0.9 [0.7, 1.2]; solo telecom +1.4 [0.5, 2.3].",
    "table2": "Paper, ECE next → use: retail 0.164 → 0.083, airline 0.106 → 0.068, telecom 0.069 → 0.049, "
              "solo 0.056 → 0.014, each difference's interval below zero.",
    "sweep": "Paper: the use-before-write speculator's utility peaks at θ* in four of six agent and domain pairs, "
             "and falls slowly past it where the next-step speculator's collapses beyond 0.4–0.5.",
    "curves": "Paper (own sessions, n = 10 → all): retail 27.5% → 28.5%, airline 14.9% → 16.1%, telecom "
              "12.4% → 15.5%; other agents' sessions within two points in retail and airline.",
    "table3b": "Paper: AgentDojo 7.2% against 7.7% (−0.5 [−1.7, 0.0]); WorkBench 0.0%, not a single lookup.",
    "env": "Paper: the record counts 96.7% of the environment's saved turns, 91% of the lead, 55–72% of its "
           "detours; 93–95% of episodes save the same turns.",
    "ablation": "The paper reports no ablation. The `next` row is the next-step speculator of Table 3 and 3b, "
                "replayed again beside the others: the same turns saved and detours.",
    "harness": "Paper (DTap-Bench): learned in other harnesses, a speculator keeps 59% of what the agent's own "
               "sessions save, with 64% of the detours; from its harness-mates, 79%.",
}
"""The paper's figures each table is to be read against (its agents and runs differ from these)."""

MAX_AGENTS_LISTED = 6
"""Past this many, the agents a speculator learned from are counted, not named, in the README."""

FALLBACK_NOTE = (f"{FALLBACK_MARK}: the row holds a test agent whose speculator could not be learned from other "
                 "agents and fell back (see what each test agent's speculator learned from).")


class BenchResults(BaseModel):
    """Everything one bench run measured (the replays are written to their own files)."""

    quick: bool
    data: str
    out: str
    draws: int
    seconds: float = 0.0
    stage_seconds: dict[str, float] = Field(default_factory=dict)
    ingest: dict[str, dict[str, Any]] = Field(default_factory=dict)
    unreadable: list[str] = Field(default_factory=list)
    split: dict[str, dict[str, dict[str, int]]] = Field(default_factory=dict)
    sources: list[LearnSource] = Field(default_factory=list)
    flows_learned: int = 0
    ceiling: dict[str, CeilingReport] = Field(default_factory=dict)
    costs: list[AppCosts] = Field(default_factory=list)
    priced: dict[str, DomainCosts | None] = Field(default_factory=dict)
    table3: list[SpeculatorComparison] = Field(default_factory=list)
    per_agent: list[SpeculatorComparison] = Field(default_factory=list)
    calibration: list[CalibrationRow] = Field(default_factory=list)
    sweep: list[SweepRow] = Field(default_factory=list)
    best_theta: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    curve_cases: list[CurveCase] = Field(default_factory=list)
    curve_points: list[CurvePoint] = Field(default_factory=list)
    curves: list[CurveRow] = Field(default_factory=list)
    table3b: list[SpeculatorComparison] = Field(default_factory=list)
    agreement: list[Agreement] = Field(default_factory=list)
    leads: list[LeadAgreement] = Field(default_factory=list)
    env_failures: list[str] = Field(default_factory=list)
    cross_harness: list[HarnessRow] = Field(default_factory=list)
    ablation: list[AblationRow] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    replays: dict[str, dict[str, ReplayResult]] = Field(default_factory=dict, exclude=True)


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()


def write_outputs(results: BenchResults, out: Path) -> None:
    """JSON rows, replays, plots and README.md under `out`."""
    (out / "json").mkdir(parents=True, exist_ok=True)
    tables: dict[str, Any] = {
        "ingest": results.ingest, "split_summary": results.split, "sources": results.sources,
        "ceiling": results.ceiling, "costs": {"counted": results.costs, "priced": results.priced},
        "table3": results.table3, "table3_per_agent": results.per_agent, "calibration": results.calibration,
        "sweep": {"rows": results.sweep, "best_theta": results.best_theta},
        "curves": {"rows": results.curves, "cases": results.curve_cases, "points": results.curve_points},
        "table3b": results.table3b,
        "record_vs_env": {"rows": results.agreement, "leads": results.leads, "failures": results.env_failures},
        "cross_harness": results.cross_harness,
        "ablation": results.ablation,
        "timings": {"seconds": results.seconds, "stages": results.stage_seconds, "quick": results.quick},
    }
    for name, body in tables.items():
        _write_json(body, out / "json" / f"{name}.json")
    for domain, by_policy in results.replays.items():
        for policy, replay in by_policy.items():
            save_replay(replay, out / "replays" / f"{slug(domain)}-{policy}.json")
    plots = out / "plots"
    if results.calibration:
        plot_reliability(results.calibration, plots / "reliability.png")
    if results.sweep:
        groups: dict[str, list[dict]] = {}
        for row in results.sweep:
            groups.setdefault(row.group, []).append(row.model_dump())
        stars = {d: (c.theta_star if c else None) for d, c in results.priced.items()}
        plot_sweep(groups, stars, plots / "sweep.png")
    if results.curves:
        curve_groups: dict[str, list[dict]] = {}
        for c in results.curves:
            curve_groups.setdefault(c.group, []).append(c.model_dump())
        plot_curves(curve_groups, plots / "curves.png")
    (out / "README.md").write_text(render_readme(results), encoding="utf-8")


def _write_json(body: Any, path: Path) -> None:
    try:
        path.write_text(json.dumps(_plain(body), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise StrettoError(f"{path}: cannot write JSON: {exc.strerror or exc}") from exc


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _sources_table(sources: Sequence[LearnSource]) -> str:
    columns = {"Domain": "domain", "Test agent": "agent", "Test episodes": "test_episodes",
               "Learned from": "label", "Sessions": "sessions",
               "Agents learned from": lambda s: (", ".join(s.learned_from) if len(s.learned_from) <= MAX_AGENTS_LISTED
                                                 else f"{len(s.learned_from)} agents (json/sources.json)") or "–"}
    return markdown_table(sources, columns, right=["Test episodes", "Sessions"])


def _split_table(split: dict[str, dict[str, dict[str, int]]]) -> str:
    rows = [{"Domain": d, "Train tasks": f"{v['tasks']['train']:,}", "Test tasks": f"{v['tasks']['test']:,}",
             "Train sessions": f"{v['sessions']['train']:,}", "Test sessions": f"{v['sessions']['test']:,}",
             "On neither side": f"{v['sessions']['none']:,}"} for d, v in split.items()]
    headers = ["Domain", "Train tasks", "Test tasks", "Train sessions", "Test sessions", "On neither side"]
    return markdown_table(rows, {h: h for h in headers}, right=headers[1:])


def _priced_table(priced: dict[str, DomainCosts | None]) -> str:
    rows = [{"Domain": d, "β": f"{c.beta:,.0f}" if c else "–", "δ": f"{c.delta:,.0f}" if c else "–",
             "θ*": f"{c.theta_star:.3f}" if c else "–", "Utility priced at": c.note if c else "no costs: utility left out"}
            for d, c in priced.items()]
    headers = ["Domain", "β", "δ", "θ*", "Utility priced at"]
    return markdown_table(rows, {h: h for h in headers}, right=["β", "δ", "θ*"])


def _table3b(rows: Sequence[SpeculatorComparison]) -> str:
    def line(c: SpeculatorComparison) -> dict[str, str]:
        return {"Group": c.group, "Episodes": f"{c.b.episodes:,}",
                "Turns saved, use before write": format_interval(c.b.turns_saved, 100, 1, "%").split(" [")[0],
                "Next step": format_interval(c.a.turns_saved, 100, 1, "%").split(" [")[0],
                "Difference (points)": format_interval(c.difference.turns_saved, 100, 2, "", True),
                "Detours / episode (use / next)": (f"{c.b.detours_per_episode.point or 0:.2f} / "
                                                   f"{c.a.detours_per_episode.point or 0:.2f}"),
                "Lookups (use / next)": f"{c.b.lookups:,} / {c.a.lookups:,}",
                "Transient (use / next)": f"{c.b.transient:,} / {c.a.transient:,}",
                "Share of ceiling (use / next)": (f"{pct(c.b.ceiling_share.point)} / {pct(c.a.ceiling_share.point)}")}

    lines = [line(c) for c in rows]
    if not lines:
        return "(nothing replayed)"
    headers = list(lines[0])
    return markdown_table(lines, {h: h for h in headers}, right=headers[1:])


def _agreement(rows: Sequence[Agreement], leads: Sequence[LeadAgreement]) -> str:
    def ratio(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:.1f}%"

    pooled: dict[str, list[Agreement]] = {}
    for r in rows:
        pooled.setdefault(r.policy, []).append(r)
    lines = [{"Domain": r.domain, "Speculator": r.policy, "Episodes": f"{r.episodes:,}",
              "Saved, record / env": f"{r.record_saved:,} / {r.env_saved:,}", "Record counts": ratio(r.saved_ratio),
              "Same saved turns": pct(r.same_saved_share, 0),
              "Detours, record / env": f"{r.record_detours:,} / {r.env_detours:,}",
              "Record counts ": ratio(r.detours_ratio), "Calls differing in env": f"{r.env_mismatches:,}"}
             for r in rows]
    for policy, group in pooled.items():
        rs, es = sum(r.record_saved for r in group), sum(r.env_saved for r in group)
        rd, ed = sum(r.record_detours for r in group), sum(r.env_detours for r in group)
        lines.append({"Domain": "All τ²", "Speculator": policy, "Episodes": f"{sum(r.episodes for r in group):,}",
                      "Saved, record / env": f"{rs:,} / {es:,}", "Record counts": ratio(rs / es if es else None),
                      "Same saved turns": "", "Detours, record / env": f"{rd:,} / {ed:,}",
                      "Record counts ": ratio(rd / ed if ed else None),
                      "Calls differing in env": f"{sum(r.env_mismatches for r in group):,}"})
    if not lines:
        return "(no environment replay)"
    headers = list(lines[0])
    table = markdown_table(lines, {h: h for h in headers}, right=headers[2:])
    lead_lines = [f"- {lead.domain}: use-before-write's lead over next-step, record {lead.record_lead:+d} turns, "
                  f"environment {lead.env_lead:+d} ({ratio(lead.ratio)})" for lead in leads]
    rl, el = sum(x.record_lead for x in leads), sum(x.env_lead for x in leads)
    lead_lines.append(f"- All τ²: record {rl:+d}, environment {el:+d} ({ratio(rl / el if el else None)})")
    return table + "\n\nThe use-before-write speculator's lead in saved turns, as each replay counts it:\n\n" + "\n".join(lead_lines)


def _best_theta(results: BenchResults) -> str:
    lines = []
    for domain, best in results.best_theta.items():
        c = results.priced.get(domain)
        star = f"θ* = {c.theta_star:.2f}" if c else "no θ*"
        lines.append(f"- {domain}: utility peaks at θ = {best.get('use')} (use before write) and "
                     f"{best.get('next')} (next step); {star}")
    return "\n".join(lines)


def _timings(results: BenchResults) -> str:
    rows = [{"Stage": k, "Seconds": f"{v:.1f}"} for k, v in results.stage_seconds.items()]
    rows.append({"Stage": "total (wall time)", "Seconds": f"{results.seconds:.1f}"})
    return markdown_table(rows, {"Stage": "Stage", "Seconds": "Seconds"}, right=["Seconds"])


def render_summary(r: BenchResults) -> str:
    """The headline tables, for the terminal: Table 3, Table 2, Table 3b, record against environment."""
    return "\n\n".join([
        "τ²-bench, both speculators at θ = 0.3 (Table 3):", render_comparisons(r.table3),
        "Calibration (Table 2):", render_calibration(r.calibration),
        "AgentDojo and WorkBench (Table 3b):", _table3b(r.table3b),
        "Ablation (what each part buys):", render_ablation(r.ablation) if r.ablation else "(not run)",
        "Record against environment:", _agreement(r.agreement, r.leads), FALLBACK_NOTE,
        f"Wall time {r.seconds / 60:.1f} minutes. Everything else: {Path(r.out) / 'README.md'}"]) + "\n"


def render_readme(r: BenchResults) -> str:
    """The README: how the run was made, then every table, each with what it measures."""
    fallbacks = [s for s in r.sources if s.fallback]
    parts = [
        "# stretto bench results",
        f"`stretto bench --data {r.data}{' --quick' if r.quick else ''}`: {r.seconds / 60:.1f} minutes wall time"
        f"{' (QUICK slice: a few files per benchmark; the numbers mean nothing)' if r.quick else ''}. "
        f"Intervals are 95%, from {r.draws:,} bootstrap draws over tasks (a task's episodes, all agents and trials, "
        "drawn together); differences are paired on the tasks both speculators replayed. Every table's rows are in "
        "`json/`, every replay in `replays/`.",
        "## Split", SPLIT_RULE, _split_table(r.split),
        "## What each test agent's speculator learned from",
        "An agent is its model (provider prefix, date and AgentDojo defence suffix dropped). Each test agent's "
        "speculator is learned from the train sessions of the other agents of its domain; where there are none, "
        "the row says what it fell back to.",
        _sources_table(r.sources),
    ]
    if fallbacks:
        parts.append("Fallbacks: " + "; ".join(f"{s.domain} {s.agent}: {s.label}" for s in fallbacks) + ".")
    mode_notes = sorted({f"{s.domain}: {s.mode_note}" for s in r.sources if s.mode_note})
    if mode_notes:
        parts.append("Too few sessions of the served mode (`flow/modes.py`): " + "; ".join(mode_notes) + ".")
    parts += ["## Read-only ceiling (test episodes; Table 1 and 1b)"]
    for name, report in r.ceiling.items():
        parts += [f"### {name}", render_table(report)]
    parts += ["## Costs (Appendix B)", render_costs(r.costs) if r.costs else "(no costs counted)",
              "Utility is priced at:", _priced_table(r.priced), PAPER["costs"],
              "## τ²-bench: both speculators at θ = 0.3 (Table 3)",
              "Learned from other agents' train sessions (see above), replayed from the record on the test episodes. "
              "Utility per episode in thousands of input tokens at the domain's costs.",
              render_comparisons(r.table3), PAPER["table3"], FALLBACK_NOTE,
              "### Per test agent", render_comparisons(r.per_agent),
              "## Calibration (Table 2)",
              "Each score over the lookups its own speculator weighed at θ = 0.3, against use before the next write; "
              "intervals on use − next. Reliability: `plots/reliability.png`.",
              render_calibration(r.calibration), PAPER["table2"], FALLBACK_NOTE,
              "## Threshold sweep (Figure 4)", render_sweep(r.sweep), _best_theta(r), PAPER["sweep"],
              "Plot: `plots/sweep.png` (utility and turns saved against θ, θ* dashed).",
              "## Learning curves (Table 4, Figure 5)",
              "Use-before-write speculator at θ = 0.3 on the agent's test episodes, learned from the first n sessions; "
              "mean over agents and random orders. `—`: the pool has fewer sessions. Plot: `plots/curves.png`.",
              render_curves(r.curves), PAPER["curves"],
              markdown_table(r.curve_cases, {"Domain": "domain", "Agent": "agent", "Own train": "own",
                                             "Others' train": "others", "Test episodes": "test"},
                             right=["Own train", "Others' train", "Test episodes"]) if r.curve_cases
              else "(no agent has enough train sessions of its own)",
              "## AgentDojo and WorkBench (Table 3b)",
              "Learned from other agents' train sessions, replayed from the record at θ = 0.3 (detours are lower "
              "bounds). No episode reports tokens, so no utility.",
              _table3b(r.table3b), PAPER["table3b"], FALLBACK_NOTE,
              "## Record against environment (Appendix D)",
              "The same flows and test episodes replayed from the record and in τ²-bench's environment.",
              _agreement(r.agreement, r.leads), PAPER["env"],
              "## Across harnesses",
              "Use-before-write at θ = 0.3, learned from the agent's own harness's train sessions (its own included) or "
              "from other harnesses' agents (its model left out), on the same test episodes; difference = other − own. "
              "The pooled row's sessions are summed over its agents.",
              render_cross_harness(r.cross_harness), PAPER["harness"],
              "## Ablation: what each part buys",
              "`stretto ablate` as a stage of the bench: per domain where the speculator made lookups, each variant "
              "(`stretto_core/evaluate/variants.py`) takes one part of the estimators away (result features, no part of "
              "the default speculator, are left to `stretto ablate --variants features`) and replays the same test "
              "episodes from the record at θ = 0.3, each test agent's flow learned from the same train sessions as "
              "Table 3's (the variants that learn as `full` does share its flow). Δ: variant − full, paired over "
              "tasks, 95% intervals. ECE: the variant's own score over the lookups it weighed. Utility is priced at "
              "the paper's τ² costs (Appendix B), and left out elsewhere.",
              render_ablation(r.ablation) if r.ablation else "(no domain with lookups to ablate)",
              PAPER["ablation"], FALLBACK_NOTE,
              "## Notes", "\n".join(f"- {n}" for n in r.notes + [f"environment: {f}" for f in r.env_failures[:10]])
              or "- none",
              "## Timings", _timings(r)]
    return "\n\n".join(parts) + "\n"
