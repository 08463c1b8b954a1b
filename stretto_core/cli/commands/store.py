"""`stretto store prune --older-than 30d`: delete recorded sessions past their retention."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from stretto_core.cli.commands._values import output_folder
from stretto_core.sessions.retention import parse_age, prune_sessions

store_app = typer.Typer(no_args_is_help=True, help="Look after the session store.")


@store_app.command("prune")
def prune(
    older_than: str = typer.Option(..., "--older-than", help="Delete sessions that started longer ago than this "
                                                             "(30d, or hours: 12h), by their header's start time."),
    store: Optional[Path] = typer.Option(None, "--store", help="The session folder (default .stretto/sessions)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List what would be deleted; delete nothing."),
) -> None:
    """Delete the sessions that started more than --older-than ago (a session without a start time is kept)."""
    from stretto_core.serve.live import default_store

    days = parse_age(older_than)
    folder = output_folder(store or default_store(), "--store")
    pruned = prune_sessions(folder, days, dry_run=dry_run)
    verb = "would delete" if dry_run else "deleted"
    typer.echo(f"{verb} {len(pruned.deleted)} sessions older than {days:g} days from {folder}"
               + (f"; {pruned.undated} without a start time kept" if pruned.undated else ""))
    for problem in pruned.failed:
        typer.echo(f"could not delete {problem}", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(store_app, name="store")
