"""`stretto userwords`: what binding from the user's words adds in replay, per suite and domain."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.evaluate.measure.bench_data import load_corpora
from stretto_core.evaluate.measure.tables import write_json
from stretto_core.evaluate.measure.user_words import measure_user_words, render_user_words
from stretto_core.errors import InputError
from stretto_core.paths import data_root
from stretto_core.serve.option_values import check_count, check_fraction
from stretto_core.serve.speculator import DEFAULT_THETA


def userwords_command(
    sessions: Path = typer.Argument(..., help="A folder of ingested sessions, one sub-folder per benchmark "
                                    "(tau2, agentdojo, workbench), as `stretto bench` writes under out/sessions."),
    split_out: Path = typer.Option(Path("split.json"), "--split-out", help="Where to freeze the split."),
    domain: Optional[List[str]] = typer.Option(None, "--domain", help="Only these suites or domains (repeatable)."),
    draws: int = typer.Option(1000, "--draws", help="Bootstrap draws per interval."),
    theta: float = typer.Option(DEFAULT_THETA, "--theta"),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write every row as JSON."),
) -> None:
    """Replay each domain's test agents with flows learned without the user's words, with the pattern,
    and with the counted spans; print the ceilings and what each flow saves."""
    if not sessions.is_dir():
        raise InputError(str(sessions), "no such folder of ingested sessions" if not sessions.exists()
                         else "not a folder: give the folder `stretto bench` writes under out/sessions")
    check_fraction("--theta", theta)
    check_count("--draws", draws, least=1)
    corpora, _ = load_corpora(sessions, split_out, data_root())
    rows = measure_user_words(corpora, theta=theta, draws=draws, domains=domain or (),
                              on_domain=lambda d: typer.echo(f"  done: {d}", err=True))
    typer.echo(render_user_words(rows))
    if json_out is not None:
        write_json(rows, json_out)
        typer.echo(f"wrote {json_out}")


def register(app: typer.Typer) -> None:
    app.command("userwords")(userwords_command)
