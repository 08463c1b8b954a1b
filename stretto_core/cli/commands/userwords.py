"""`stretto userwords`: what binding from the user's words adds in replay, per suite and domain."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.cli.commands._values import check_outputs
from stretto_core.evaluate.measure.bench_data import SOURCES, load_corpora
from stretto_core.sessions.jsonfile import output_path
from stretto_core.evaluate.measure.tables import write_json
from stretto_core.evaluate.measure.user_words import measure_user_words, render_user_words
from stretto_core.errors import InputError, StrettoError
from stretto_core.paths import data_root
from stretto_core.serve.option_values import check_count, check_fraction
from stretto_core.serve.speculator import DEFAULT_THETA


def userwords_command(
    sessions: Path = typer.Argument(..., help="A folder of ingested sessions, one sub-folder per benchmark "
                                    "(tau2, agentdojo, workbench), as `stretto bench` writes under out/sessions."),
    split_out: Path = typer.Option(Path("split.json"), "--split-out", help="Where to freeze the split."),
    domain: Optional[List[str]] = typer.Option(None, "--domain", help="Only these domains, e.g. tau2/retail (repeatable)."),
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
    check_outputs(json_out)
    output_path(split_out, "split file")
    if not any((sessions / source).is_dir() for source in SOURCES):
        raise InputError(str(sessions), f"no {', '.join(f'{s}/' for s in SOURCES)} folder of ingested sessions in "
                                        "it (as `stretto bench` writes under out/sessions)")
    corpora, _ = load_corpora(sessions, split_out, data_root())
    known = {d for corpus in corpora.values() for d in corpus.domains()}
    unknown = [d for d in domain or () if d not in known]
    if unknown:
        raise StrettoError(f"--domain {unknown[0]!r}: no such domain in {sessions} "
                           f"(here: {', '.join(sorted(known)) or 'none'})")
    rows = measure_user_words(corpora, theta=theta, draws=draws, domains=domain or (),
                              on_domain=lambda d: typer.echo(f"  done: {d}", err=True))
    typer.echo(render_user_words(rows))
    if json_out is not None:
        write_json(rows, json_out)
        typer.echo(f"wrote {json_out}")


def register(app: typer.Typer) -> None:
    app.command("userwords")(userwords_command)
