"""`stretto bench`: every table of the paper's §4.1–4.3 that the published runs allow, in one run.

Ingest τ²-bench, AgentDojo and WorkBench from the data folder into `out/sessions`, freeze the
split (`out/split.json`), learn each test agent's speculator from other agents' train sessions,
and measure: the ceiling; per τ² domain Table 3 (both speculators at θ = 0.3), Table 2
(calibration), the costs, a threshold sweep, learning curves (Table 4), the record against the
environment, and cross-harness transfer; AgentDojo per suite and WorkBench per domain (Table 3b);
and the ablation (`stretto ablate`: what each part of the estimators buys) of every domain where
the speculator made lookups. Everything is written under `out/` as JSON rows, PNG plots and a
README.md that gathers the tables.

`quick` runs a small slice (a few files of each benchmark, fewer draws, thresholds and orders),
for tests; its numbers mean nothing.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from stretto_core.errors import StrettoError
from stretto_core.evaluate.measure.ablation import ablate_domain
from stretto_core.evaluate.measure.bench_data import (SOURCES, Corpus, agent_key, domain_of, ingest_all,
                                                     load_corpora)
from stretto_core.evaluate.measure.bench_plan import DomainPlan, FlowCache, plan_domain
from stretto_core.evaluate.measure.bench_report import BenchResults, write_outputs
from stretto_core.evaluate.measure.bench_stages import (counted_costs, curve_cases, harness_cases, record_vs_env,
                                               replay_both)
from stretto_core.evaluate.measure.calibration import calibrate
from stretto_core.evaluate.measure.ceiling import ceiling_report, measure_session
from stretto_core.evaluate.measure.crossharness import cross_harness
from stretto_core.evaluate.measure.curves import ORDERS, SIZES, curve_rows, learning_curve
from stretto_core.evaluate.measure.metrics import (DomainCosts, SpeculatorComparison, compare_speculators, costs_for,
                                          merge_results, task_key)
from stretto_core.evaluate.measure.sweep import THETAS, best_theta, sweep, sweep_rows
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.evaluate.variants import VARIANTS, VariantFlows, variant
from stretto_core.serve.speculator import DEFAULT_THETA

TAU2 = "tau2"
TAU2_STAGES = 6
"""Stages per τ² domain: Table 3 replays, calibration, sweep, environment, curves, cross-harness."""
OTHERS = ("agentdojo", "workbench")
POOLED_NAMES = {"agentdojo": "AgentDojo (all suites)", "workbench": "WorkBench (all domains)"}


@dataclass(frozen=True)
class BenchSettings:
    """How much to run: the full bench, or the --quick slice."""

    quick: bool = False
    draws: int = 1000
    thetas: tuple[float, ...] = THETAS
    curve_sizes: tuple[int, ...] = SIZES
    curve_orders: int = ORDERS
    curve_agents: int = 3
    env_episodes: int | None = None
    """Test episodes per domain replayed in the environment (None: all)."""
    seed: int = 0
    ablation: tuple[str, ...] = tuple(v.name for v in VARIANTS if not v.features and not v.recalibrate)
    """The variants of the ablation stage (`evaluate.variants`), on each domain with lookups; () skips it.
    Each takes a part of the speculator as released away (and `next` is the next-step rule); result
    features are no part of it (`learn` adds none by default), and learning them for every test
    agent would double the stage's time, so `stretto ablate --variants features` measures them; the
    site recalibration cross-fits five folds per test agent (minutes in airline), so
    `stretto ablate --variants full,recalibrated` (or `benchmarks/site_recalibration.py`) does."""


FULL = BenchSettings()
QUICK = BenchSettings(quick=True, draws=200, thetas=(0.1, 0.3, 0.5), curve_sizes=(10,), curve_orders=1,
                      curve_agents=1, env_episodes=4, ablation=("full", "simple", "next"))


class Stages:
    """Times each stage and moves the progress bar."""

    def __init__(self, show: bool) -> None:
        self.bar = tqdm(total=2, unit="stage", disable=not show, dynamic_ncols=True)
        self.seconds: dict[str, float] = {}

    def expect(self, more: int) -> None:
        self.bar.total = (self.bar.total or 0) + more
        self.bar.refresh()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self.bar.set_description(name[:48])
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
            self.bar.update(1)


@contextmanager
def _data_root(data: Path) -> Iterator[None]:
    """Point STRETTO_DATA at the bench's data folder while it runs (ingest reads manifests there)."""
    before = os.environ.get("STRETTO_DATA")
    os.environ["STRETTO_DATA"] = str(data)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("STRETTO_DATA", None)
        else:
            os.environ["STRETTO_DATA"] = before


def run_bench(data: Path, out: Path, settings: BenchSettings = FULL, progress: bool = True) -> BenchResults:
    """Run every measurement on the data folder and write the results folder; returns the results."""
    data, out = Path(data).resolve(), Path(out)
    if not data.is_dir():
        raise StrettoError(f"{data}: no such data folder (pass --data, or set STRETTO_DATA)")
    if not any((data / runs).is_dir() for runs in SOURCES.values()):
        raise StrettoError(f"{data}: no published runs in it ({', '.join(f'{r}/' for r in SOURCES.values())}); "
                           "pass --data the shared data folder")
    started = time.perf_counter()
    stages = Stages(progress)
    results = BenchResults(quick=settings.quick, data=str(data), out=str(out), draws=settings.draws)
    with _data_root(data):
        with stages.stage("ingest"):
            reports = ingest_all(data, out / "sessions", settings.quick)
            results.ingest = {s: {"files": len(r.files), "sessions": r.sessions_written, "skipped": len(r.skipped),
                                  "seconds": r.seconds} for s, r in reports.items()}
        with stages.stage("split, and learn each test agent's flow"):
            corpora, load_report = load_corpora(out / "sessions", out / "split.json", data)
            results.unreadable = load_report.problems()[:20]
            _split_summary(results, corpora)
            flows = FlowCache()
            plans = {name: [plan_domain(c, d, flows) for d in c.domains()] for name, c in corpora.items()}
        for name, ps in plans.items():
            results.sources.extend(src for p in ps for src in p.sources)
            stages.expect(len(ps) * (TAU2_STAGES if name == TAU2 else 1) + (1 if name == TAU2 else 2))
        stages.expect(1)
        for name, corpus in corpora.items():
            with stages.stage(f"{name}: ceiling"):
                results.ceiling[name] = ceiling_report(
                    [measure_session(s, s.header.manifest) for s in corpus.on("test") if s.header.manifest])
        for plan in plans.get(TAU2, []):
            _tau2_domain(corpora[TAU2], plan, settings, stages, results)
        for name in OTHERS:
            if name in plans:
                _other_benchmark(name, plans[name], settings, stages, results)
        if settings.ablation:
            _ablation(corpora, plans, flows, settings, stages, results)
        results.flows_learned = flows.learned
        with stages.stage("report"):
            results.seconds = time.perf_counter() - started
            results.stage_seconds = dict(stages.seconds)
            write_outputs(results, out)
    stages.bar.close()
    return results


def _ablation(corpora: dict[str, Corpus], plans: dict[str, list[DomainPlan]], flows: FlowCache,
              settings: BenchSettings, stages: Stages, results: BenchResults) -> None:
    """Every variant on each domain whose use-before-write replay made a lookup (elsewhere every
    variant would make none); the flows `full` serves are the bench's own, not learned again."""
    shared = VariantFlows(default=lambda sessions: flows.flow(sessions).flow)
    chosen = [(name, plan.domain) for name, ps in plans.items() for plan in ps
              if plan.domain in results.replays and results.replays[plan.domain]["use"].lookups]
    stages.expect(len(chosen))
    for name, domain in chosen:
        with stages.stage(f"{domain}: ablation"):
            results.ablation.extend(ablate_domain(corpora[name], domain, [variant(v) for v in settings.ablation],
                                                  DEFAULT_THETA, settings.draws, settings.seed, flows=shared))
    skipped = [plan.domain for ps in plans.values() for plan in ps
               if plan.domain in results.replays and not results.replays[plan.domain]["use"].lookups]
    if skipped:
        results.notes.append(f"ablation: not run where the speculator made no lookup ({', '.join(skipped)})")


def _split_summary(results: BenchResults, corpora: dict[str, Corpus]) -> None:
    for corpus in corpora.values():
        for domain in corpus.domains():
            sessions = [s for s in corpus.sessions if domain_of(s.header) == domain]
            sides = {side: sum(1 for s in sessions if corpus.sides[s.session_id] == side) for side in ("train", "test", "none")}
            tasks = {side: len({s.header.task_id for s in sessions if corpus.sides[s.session_id] == side})
                     for side in ("train", "test")}
            results.split[domain] = {"sessions": sides, "tasks": tasks}


def _tau2_domain(corpus: Corpus, plan: DomainPlan, settings: BenchSettings, stages: Stages,
                 results: BenchResults) -> None:
    domain = plan.domain
    if not plan.assignments:
        results.notes.append(f"{domain}: no test agent has train sessions to learn from; skipped")
        stages.bar.update(TAU2_STAGES)
        return
    with stages.stage(f"{domain}: Table 3 replays"):
        record = replay_both(plan, DEFAULT_THETA, weigh=True)
        counted = counted_costs(plan, record["use"])
        priced = costs_for(domain, counted)
        if counted is not None:
            results.costs.append(counted)
        results.priced[domain] = priced
        results.table3.append(compare_speculators(record["next"], record["use"], priced, group=plan.label(),
                                                  draws=settings.draws, seed=settings.seed))
        results.per_agent.extend(_per_agent(plan, record, priced, settings))
        results.replays[domain] = record
    with stages.stage(f"{domain}: calibration"):
        keys = {r.session_id: task_key(r) for r in record["use"].episode_rows}
        results.calibration.append(calibrate(record["next"].weighed_rows, record["use"].weighed_rows, group=plan.label(),
                                             task_of=lambda row: keys[row.session_id], draws=settings.draws,
                                             seed=settings.seed))
    with stages.stage(f"{domain}: threshold sweep"):
        rows = sweep_rows(domain, sweep(plan.assignments, settings.thetas), priced)
        results.sweep.extend(rows)
        results.best_theta[domain] = {p: best_theta(rows, p) for p in ("next", "use")}
    with stages.stage(f"{domain}: record vs environment"):
        _environment(plan, record, settings, results)
    with stages.stage(f"{domain}: learning curves"):
        for case, own, others in curve_cases(corpus, plan, settings.curve_agents):
            results.curve_cases.append(case)
            results.curve_points.extend(learning_curve(
                domain, case.agent, own, others, plan.tests[case.agent], sizes=settings.curve_sizes,
                orders=settings.curve_orders, seed=settings.seed))
        results.curves = curve_rows(results.curve_points)
    with stages.stage(f"{domain}: cross-harness"):
        cases = harness_cases(corpus, plan)
        if cases:
            results.cross_harness.extend(cross_harness(domain, cases, costs=priced, draws=settings.draws,
                                                       seed=settings.seed))


def _per_agent(plan: DomainPlan, record: dict[str, ReplayResult], priced: DomainCosts | None,
               settings: BenchSettings) -> list[SpeculatorComparison]:
    """Table 3 per test agent, to see whether the pooled gain holds for each."""
    out = []
    agents = sorted({agent_key(r.agent) for r in record["use"].episode_rows})
    for agent in agents:
        parts = {p: record[p].model_copy(update={"episode_rows": [r for r in record[p].episode_rows
                                                                  if agent_key(r.agent) == agent]})
                 for p in record}
        out.append(compare_speculators(parts["next"], parts["use"], priced, group=plan.label(agent),
                                       draws=settings.draws, seed=settings.seed))
    return out


def _environment(plan: DomainPlan, record: dict[str, ReplayResult], settings: BenchSettings,
                 results: BenchResults) -> None:
    limited = plan.limited(settings.env_episodes) if settings.env_episodes else plan
    try:
        env = record_vs_env(limited, record)
    except (StrettoError, ImportError) as exc:
        results.notes.append(f"{plan.domain}: environment replay unavailable ({exc})")
        return
    results.agreement.extend(env.rows)
    results.leads.append(env.lead)
    results.env_failures.extend(env.failures)
    results.replays[f"{plan.domain} env"] = env.replays


def _other_benchmark(name: str, plans: list[DomainPlan], settings: BenchSettings, stages: Stages,
                     results: BenchResults) -> None:
    pooled: dict[str, list[ReplayResult]] = {"next": [], "use": []}
    for plan in plans:
        with stages.stage(f"{plan.domain}: replays"):
            if not plan.assignments:
                results.notes.append(f"{plan.domain}: no test agent has train sessions to learn from; skipped")
                continue
            record = replay_both(plan, DEFAULT_THETA)
            results.replays[plan.domain] = record
            for policy in pooled:
                pooled[policy].append(record[policy])
            results.table3b.append(compare_speculators(record["next"], record["use"], None, group=plan.label(),
                                                       draws=settings.draws, seed=settings.seed))
    with stages.stage(f"{name}: pooled"):
        if len(pooled["use"]) > 1:
            results.table3b.append(compare_speculators(merge_results(pooled["next"]), merge_results(pooled["use"]),
                                                       None, group=POOLED_NAMES[name], draws=settings.draws,
                                                       seed=settings.seed))
