"""`stretto doctor`: check the install, the SDK extras, the store, the flows and the data."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def doctor(home: Optional[Path] = typer.Option(None, "--home", help="stretto's folder (default: STRETTO_HOME or .stretto).")) -> None:
    """Check the install, the SDK extras, the store, the flows and the data, and say what to fix."""
    from stretto_core.cli.checks import render, run_checks

    checks = run_checks(home)
    typer.echo(render(checks))
    if any(c.status == "fix" for c in checks):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
