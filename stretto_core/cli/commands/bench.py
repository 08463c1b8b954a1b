"""`stretto bench`: ingest the published runs, measure every table the paper's §4.1–4.3 has, write a results page."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Optional

import typer

from stretto_core.cli.commands._values import output_folder
from stretto_core.evaluate.measure.bench import FULL, QUICK, run_bench
from stretto_core.evaluate.measure.bench_report import render_summary
from stretto_core.paths import data_root


def bench(
    data: Optional[Path] = typer.Option(None, "--data", help="The published data folder (default: STRETTO_DATA, "
                                        "else ../shared/data beside the repository)."),
    out: Path = typer.Option(Path("results"), "--out", help="Folder for sessions, split, JSON rows, plots and README.md."),
    quick: bool = typer.Option(False, "--quick", help="A small slice with few draws: checks that everything runs; "
                               "its numbers mean nothing."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar on stderr."),
    ablation: bool = typer.Option(True, "--ablation/--no-ablation", help="Run the ablation stage (what each part "
                                  "of the estimators buys, as `stretto ablate`)."),
) -> None:
    """Run the ceiling, Table 3, calibration, costs, sweep, learning curves, AgentDojo and WorkBench,
    record against environment, cross-harness transfer and the ablation; gather them in OUT/README.md."""
    settings = QUICK if quick else FULL
    output_folder(out, "--out")
    results = run_bench(data or data_root(), out, settings if ablation else replace(settings, ablation=()),
                        progress=progress)
    typer.echo(render_summary(results))


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)
