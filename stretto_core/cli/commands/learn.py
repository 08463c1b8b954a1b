"""`stretto learn`: count sessions into a flow file."""

from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.errors import StrettoError
from stretto_core.flow.ir import save_flow
from stretto_core.sessions.manifest import load_manifest
from stretto_core.sessions.splits import load_split_file


def learn_command(
    paths: List[str] = typer.Argument(..., help="Session files, folders of *.jsonl sessions, or URLs of a shared store (fsspec)."),
    out: Path = typer.Option(..., "--out", help="The flow file to write."),
    prior: Optional[List[str]] = typer.Option(None, "--prior", help="Sessions that enter as a prior (repeatable)."),
    prior_weight: Optional[float] = typer.Option(None, "--prior-weight",
                                                 help="How many sessions the prior weighs in all (default: its own count)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="Tool kinds, instead of the sessions' own."),
    split: str = typer.Option("train", "--split", help="Learn from this side of the task split: train, test, none or all."),
    split_file: Optional[Path] = typer.Option(None, "--split-file", help="A frozen split (`stretto split`)."),
    features: bool = typer.Option(False, "--features/--no-features", help="Learn result features (held-out likelihood)."),
    constants: bool = typer.Option(False, "--constants", help="Learn arguments the agent always passes one value for."),
    app: Optional[List[str]] = typer.Option(None, "--app", help="Learn only from sessions of this app, e.g. tau2/retail (repeatable)."),
    workers: int = typer.Option(0, "--workers", help="Count shards of the sessions on this many Dask workers "
                                "(0: in this process); the flow is the same byte for byte."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="With --workers: an existing Dask scheduler "
                                            "(or Ray cluster) address, instead of a local cluster."),
    engine: str = typer.Option("dask", "--engine", help="With --workers: dask or ray."),
) -> None:
    """Learn a flow by counting: the habit, the reach, the bindings and the tools' contracts.

    Sessions are read one at a time (headers first, to choose them), so memory does not grow with
    their number; with --workers they are counted in shards on a cluster and the counts added.
    """
    from stretto_core.flow.stream import choose, learn_chosen

    started = time.perf_counter()
    frozen = load_split_file(split_file) if split_file is not None else None
    man = load_manifest(manifest) if manifest else None
    chosen = choose(paths, split, frozen, apps=app or (), prior=prior or (), manifest=man)
    _refuse_empty(chosen.files, paths, split, app or (), "sessions")
    if prior:
        _refuse_empty(chosen.prior, prior, split, app or (), "prior sessions")
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
                                  features=learned_features if features else None, constants=constants)
    try:
        flow = learn_chosen(chosen, prior_weight=prior_weight, features=learned_features,  # type: ignore[arg-type]
                            constants=constants, counter=counter)
    finally:
        if counter is not None:
            counter.close()
    _report(chosen.report)
    save_flow(flow, out)
    took = time.perf_counter() - started
    assert flow.alpha is not None
    counted = {s.role: s.sessions for s in flow.provenance.sources}
    n_data, n_prior = counted.get("data", 0), counted.get("prior", 0)
    typer.echo(f"learned {out} from {n_data} sessions"
               + (f" and a prior of {n_prior} weighing {prior_weight or n_prior:g}" if n_prior else "")
               + (f" on {workers} {engine} workers" if workers else "")
               + f": α = {flow.alpha.alpha:.3g}, {len(flow.manifest.reads())} reads, {took:.2f} s")


def _refuse_empty(chosen: list[str], paths: List[str], split: str, apps: List[str], what: str) -> None:
    if not chosen:
        where = ", ".join(str(p) for p in paths)
        raise StrettoError(f"no {what} found in {where}" + (f" of app {', '.join(apps)}" if apps else "")
                           + (f" on the {split} side of the split" if split != "all" else ""))


def _report(report) -> None:
    problems = report.problems()
    for problem in problems[:20]:
        typer.echo(f"skipped: {problem}", err=True)
    if len(problems) > 20:
        typer.echo(f"skipped: … and {len(problems) - 20} more", err=True)


def register(app: typer.Typer) -> None:
    app.command("learn")(learn_command)
