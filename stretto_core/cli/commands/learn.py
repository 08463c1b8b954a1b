"""`stretto learn`: count sessions into a flow file."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.cli.commands._load import load_for_verb
from stretto_core.errors import StrettoError
from stretto_core.flow.harness import (ALL, DEFAULT_MATES, DEFAULT_OTHERS, Weight, learn_split, parse_weight,
                                       split_for_agent)
from stretto_core.flow.ir import Flow, save_flow
from stretto_core.flow.site_calibration import DEFAULT_PRIOR
from stretto_core.flow.modes import describe_modes, mode_notes, served_modes
from stretto_core.learn.bindings.lift_decisions import CLASS_LIFT_MODES
from stretto_core.learn.bindings.model import DEFAULT_OPTIONS, BindingOptions
from stretto_core.sessions.jsonfile import output_path
from stretto_core.sessions.user_words import MODES
from stretto_core.sessions.manifest import load_manifest
from stretto_core.sessions.splits import load_split_file


def learn_command(
    paths: List[str] = typer.Argument(..., help="Session files, folders of *.jsonl sessions, or URLs of a shared store (fsspec)."),
    out: Path = typer.Option(..., "--out", help="The flow file to write."),
    prior: Optional[List[str]] = typer.Option(None, "--prior", help="Sessions that enter as a prior (repeatable)."),
    prior_weight: Optional[float] = typer.Option(None, "--prior-weight",
                                                 help="How many sessions the prior weighs in all (default: its own count)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="Tool kinds, instead of the sessions' own."),
    split: str = typer.Option("auto", "--split", help="Learn from this side of the task split: auto (the train side "
                              "where tasks are labelled, and every session that names no task: an app's own), "
                              "train, test, none or all."),
    split_file: Optional[Path] = typer.Option(None, "--split-file", help="A frozen split (`stretto split`)."),
    features: bool = typer.Option(False, "--features/--no-features", help="Learn result features (held-out likelihood)."),
    constants: bool = typer.Option(False, "--constants", help="Learn arguments the agent always passes one value for."),
    user_words: Optional[str] = typer.Option(None, "--user-words", help="Bind from the user's words too: `pattern` "
                                             "(the request's only email, date, number or id) or `spans` (by shape "
                                             "and position, counted). Off by default (docs/user-words.md)."),
    class_lift: str = typer.Option(DEFAULT_OPTIONS.class_lift, "--class-lift", help="At which decisions the class lift is "
                                   "counted: full (every one), thin (the binding evidence's and a third of the "
                                   "rest, weighted), visited (the evidence's alone) or off (no lift); "
                                   "docs/speculator.md."),
    app: Optional[List[str]] = typer.Option(None, "--app", help="Learn only from sessions of this app, e.g. tau2/retail (repeatable)."),
    agent: Optional[str] = typer.Option(None, "--agent", help="Learn for this agent (its model): its own sessions are "
                                        "the data, its harness-mates' and other harnesses' enter as priors."),
    harness: Optional[str] = typer.Option(None, "--harness", help="The agent's harness (needed when it ran in several)."),
    prior_mates: Optional[str] = typer.Option(None, "--prior-harness-mates", help="With --agent: what other agents of "
                                              f"its harness weigh, in sessions, or `all` (default {DEFAULT_MATES})."),
    prior_others: Optional[str] = typer.Option(None, "--prior-others", help="With --agent: what other harnesses' "
                                               f"sessions weigh, in sessions, or `all` (default {DEFAULT_OTHERS:g})."),
    workers: int = typer.Option(0, "--workers", help="Count shards of the sessions on this many Dask workers "
                                "(0: in this process); the flow is the same byte for byte."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="With --workers: an existing Dask scheduler "
                                            "(or Ray cluster) address, instead of a local cluster."),
    engine: str = typer.Option("dask", "--engine", help="With --workers: dask or ray."),
    recalibrate: bool = typer.Option(False, "--recalibrate", help="Recalibrate each site's score on the use counted "
                                     "there, by cross-fitting the sessions (the paper's Appendix B; reads them "
                                     "into memory and learns a flow per fold: docs/speculator.md)."),
    recalibrate_prior: float = typer.Option(DEFAULT_PRIOR, "--recalibrate-prior", help="With --recalibrate: how "
                                            "many candidates a site's own score weighs as."),
) -> None:
    """Learn a flow by counting: the habit, the reach, the bindings and the tools' contracts.

    Sessions are read one at a time (headers first, to choose them), so memory does not grow with
    their number; with --workers they are counted in shards on a cluster and the counts added.
    """
    started = time.perf_counter()
    if prior_weight is not None and not (math.isfinite(prior_weight) and prior_weight >= 0):
        raise StrettoError(f"--prior-weight must be a finite number ≥ 0, not {prior_weight}")
    output_path(out, "flow")
    man = load_manifest(manifest) if manifest else None
    if user_words is not None and user_words not in MODES:
        raise StrettoError(f"--user-words is one of {', '.join(MODES)}, not {user_words!r}")
    if class_lift not in CLASS_LIFT_MODES:
        raise StrettoError(f"--class-lift is one of {', '.join(CLASS_LIFT_MODES)}, not {class_lift!r}")
    options = BindingOptions(user_words=user_words, class_lift=class_lift)
    _check_workers(workers, scheduler)
    from stretto_core.flow.distributed import ENGINES  # checked without --workers too: a typo means nothing

    if engine not in ENGINES:
        raise StrettoError(f"--engine is one of {', '.join(ENGINES)}, not {engine!r}")
    if recalibrate and (agent is not None or prior or workers):
        raise StrettoError("--recalibrate does not go with --agent, --prior or --workers yet")
    if not (math.isfinite(recalibrate_prior) and recalibrate_prior >= 0):
        raise StrettoError(f"--recalibrate-prior must be a finite number ≥ 0, not {recalibrate_prior}")
    if agent is None:
        if prior_mates is not None or prior_others is not None or harness is not None:
            raise StrettoError("--harness, --prior-harness-mates and --prior-others need --agent")
        flow = _learn_streamed(paths, prior or [], prior_weight, man, split, split_file, features, constants,
                               app or [], options, workers, scheduler, engine)
        counted = {s.role: s for s in flow.provenance.sources}
        data = counted.get("data")
        head = f"learned {out} from {data.sessions if data else 0} sessions"
        if data is not None and len(data.harnesses) > 1:
            head += f" of {len(data.harnesses)} harnesses, pooled (--agent weighs them apart)"
        n_prior = counted["prior"].sessions if "prior" in counted else 0
        if workers:
            head += f" on {workers} {engine} workers"
    else:
        if workers:
            raise StrettoError("--workers does not go with --agent yet")
        sessions = load_for_verb([Path(p) for p in paths], split, split_file, apps=app or ())
        prior_sessions = load_for_verb([Path(p) for p in prior], split, split_file, "prior sessions",
                                       apps=app or ()) if prior else []
        split_ = split_for_agent(sessions, agent, harness)
        mates, others = parse_weight(prior_mates, DEFAULT_MATES), parse_weight(prior_others, DEFAULT_OTHERS)
        extra = [(prior_sessions, prior_weight)] if prior_sessions else []
        flow = learn_split(split_, mates=mates, others=others, manifest=man, features=features,
                           constants=constants, priors=extra, binding_options=options)
        head = (f"learned {out} for {split_.agent} ({split_.harness}) from its {len(split_.own)} sessions, "
                f"{len(split_.mates)} of harness-mates weighing {_weight(mates, split_.mates)} and "
                f"{len(split_.others)} of other harnesses weighing {_weight(others, split_.others)}")
        n_prior = len(prior_sessions)
    if recalibrate:
        flow = _recalibrated(flow, paths, man, split, split_file, features, constants, app or [], options,
                             recalibrate_prior)
        head += _recalibrated_note(flow)
    save_flow(flow, out)
    took = time.perf_counter() - started
    assert flow.alpha is not None
    typer.echo(head
               + (f" and a prior of {n_prior} weighing {prior_weight or n_prior:g}" if n_prior else "")
               + f": α = {flow.alpha.alpha:.3g}, {len(flow.manifest.reads())} reads, {took:.2f} s")
    typer.echo(f"sessions per mode: {describe_modes(flow)}")
    for note in mode_notes(flow, served_modes(flow)):
        typer.echo(f"note: {note}")


def _recalibrated(flow: Flow, paths: List[str], man, split: str, split_file: Optional[Path], features: bool,
                  constants: bool, apps: List[str], options: BindingOptions, prior: float) -> Flow:
    """The flow with its sites' use counted by cross-fitting the same sessions (`evaluate/site_calibration.py`):
    each fold's flow learned as this one was (its result features kept), served as this one will be."""
    from stretto_core.evaluate.site_calibration import calibrate_sites
    from stretto_core.flow.ir import count_sessions, learn, manifest_of_sessions
    from stretto_core.serve.runtime import FlowRuntime

    sessions = load_for_verb([Path(p) for p in paths], split, split_file, apps=apps)
    fmap = flow.features if features else None
    calibration = calibrate_sites(
        sessions,
        lambda part: learn(list(part), man, features=fmap, constants=constants, binding_options=options),
        prior=prior, model_of=lambda fold_flow: FlowRuntime(fold_flow, binding_options=options, recalibrate=False),
        count_flow=lambda part: count_sessions(list(part), manifest_of_sessions(part, man), features=fmap,
                                               constants=constants, binding_options=options))
    return flow.model_copy(update={"site_calibration": calibration})


def _recalibrated_note(flow: Flow) -> str:
    cal = flow.site_calibration
    assert cal is not None
    moved = sum(1 for f in cal.factors().values() if abs(f - 1.0) >= 0.05)
    return f", {len(cal.sites)} sites calibrated ({moved} moved by 5% or more)"


def _learn_streamed(paths: List[str], prior: List[str], prior_weight: Optional[float], man, split: str,
                    split_file: Optional[Path], features: bool, constants: bool, apps: List[str],
                    options: BindingOptions, workers: int, scheduler: Optional[str], engine: str):
    """Learn one session at a time (`flow/stream.py`), in this process or in shards on a cluster."""
    from stretto_core.flow.stream import choose, learn_chosen

    frozen = load_split_file(split_file) if split_file is not None else None
    chosen = choose(paths, split, frozen, apps=apps, prior=prior, manifest=man)
    _refuse_empty(chosen.files, paths, split, apps, "sessions")
    if prior:
        _refuse_empty(chosen.prior, prior, split, apps, "prior sessions")
    learned_features: object = features
    counter = None
    if workers:
        from stretto_core.flow.distributed import cluster_counter

        assert chosen.manifest is not None
        if features:  # the feature map is learned here first (one pass), then shipped to the workers
            from stretto_core.flow.stream import sessions_of
            from stretto_core.learn.features import learn_feature_map

            learned_features = learn_feature_map(sessions_of(chosen.files + chosen.prior))
        counter = cluster_counter(chosen.manifest, workers=workers, address=scheduler, engine=engine,
                                  features=learned_features if features else None, constants=constants,
                                  binding_options=options)
    try:
        flow = learn_chosen(chosen, prior_weight=prior_weight, features=learned_features,  # type: ignore[arg-type]
                            constants=constants, binding_options=options, counter=counter)
    finally:
        if counter is not None:
            counter.close()
            for worker in counter.reports:  # each worker's read report (worker_report.py)
                typer.echo(f"read on {worker.line()}")
            for problem in counter.problems[:20]:
                typer.echo(f"skipped on a worker: {problem}", err=True)
    _report(chosen.report)
    if chosen.split_said():
        typer.echo(chosen.split_said())
    return flow


def _refuse_empty(chosen: list[str], paths: List[str], split: str, apps: List[str], what: str) -> None:
    if not chosen:
        where = ", ".join(str(p) for p in paths)
        raise StrettoError(f"no {what} found in {where}" + (f" of --app {', '.join(repr(a) for a in apps)}" if apps else "")
                           + (f" on the {split} side of the split" if split not in ("all", "auto") else "")
                           + (" (with a task label, only the train side of the split is learned)"
                              if split == "auto" else ""))


def _report(report) -> None:
    problems = report.problems()
    for problem in problems[:20]:
        typer.echo(f"skipped: {problem}", err=True)
    if len(problems) > 20:
        typer.echo(f"skipped: … and {len(problems) - 20} more", err=True)


def _weight(weight: Weight, body: list) -> str:
    if not body or weight == 0:
        return "nothing"
    return f"{len(body)} (each one)" if weight == ALL else f"{float(weight):g}"


def register(app: typer.Typer) -> None:
    app.command("learn")(learn_command)


MAX_CLUSTER_WORKERS = 4096
"""Workers `--workers` may name on an existing cluster (`--scheduler`)."""


def _check_workers(workers: int, scheduler: Optional[str]) -> None:
    """`--workers` is 0 (this process) or a count a cluster can have: on the local cluster stretto
    starts, at most 8 per core (each worker is a process; 1,000 would swamp the machine);
    `--scheduler` needs workers."""
    import os

    most = MAX_CLUSTER_WORKERS if scheduler else max(16, 8 * (os.cpu_count() or 1))
    if workers < 0 or workers > most:
        where = "on an existing cluster" if scheduler else "on this machine (8 worker processes per core)"
        raise StrettoError(f"--workers must be 0 (this process) to {most} {where}, not {workers}")
    if scheduler and not workers:
        raise StrettoError("--scheduler names a cluster for --workers: give --workers N too")
