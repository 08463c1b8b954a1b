"""`stretto learn`: count sessions into a flow file."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.cli.commands._load import load_for_verb
from stretto_core.errors import StrettoError
from stretto_core.flow.ir import learn, save_flow
from stretto_core.sessions.jsonfile import output_path
from stretto_core.sessions.manifest import load_manifest


def learn_command(
    paths: List[Path] = typer.Argument(..., help="Session files, or folders of *.jsonl sessions."),
    out: Path = typer.Option(..., "--out", help="The flow file to write."),
    prior: Optional[List[Path]] = typer.Option(None, "--prior", help="Sessions that enter as a prior (repeatable)."),
    prior_weight: Optional[float] = typer.Option(None, "--prior-weight",
                                                 help="How many sessions the prior weighs in all (default: its own count)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="Tool kinds, instead of the sessions' own."),
    split: str = typer.Option("train", "--split", help="Learn from this side of the task split: train, test, none or all."),
    split_file: Optional[Path] = typer.Option(None, "--split-file", help="A frozen split (`stretto split`)."),
    features: bool = typer.Option(False, "--features/--no-features", help="Learn result features (held-out likelihood)."),
    constants: bool = typer.Option(False, "--constants", help="Learn arguments the agent always passes one value for."),
    app: Optional[List[str]] = typer.Option(None, "--app", help="Learn only from sessions of this app, e.g. tau2/retail (repeatable)."),
) -> None:
    """Learn a flow by counting: the habit, the reach, the bindings and the tools' contracts."""
    started = time.perf_counter()
    if prior_weight is not None and not (math.isfinite(prior_weight) and prior_weight >= 0):
        raise StrettoError(f"--prior-weight must be a finite number ≥ 0, not {prior_weight}")
    output_path(out, "flow")
    man = load_manifest(manifest) if manifest else None
    sessions = load_for_verb(paths, split, split_file, apps=app or ())
    prior_sessions = load_for_verb(prior, split, split_file, "prior sessions", apps=app or ()) if prior else []
    flow = learn(sessions, man, prior=prior_sessions, prior_weight=prior_weight, features=features,
                 constants=constants)
    save_flow(flow, out)
    took = time.perf_counter() - started
    assert flow.alpha is not None
    typer.echo(f"learned {out} from {len(sessions)} sessions"
               + (f" and a prior of {len(prior_sessions)} weighing {prior_weight or len(prior_sessions):g}" if prior_sessions else "")
               + f": α = {flow.alpha.alpha:.3g}, {len(flow.manifest.reads())} reads, {took:.2f} s")


def register(app: typer.Typer) -> None:
    app.command("learn")(learn_command)
