"""`stretto flow show|merge|diff`: read, combine and review flow files."""

from __future__ import annotations

from pathlib import Path

import typer

from stretto_core.flow import load_flow, merge, save_flow
from stretto_core.flow_review import diff, show

flow_app = typer.Typer(no_args_is_help=True, help="Read, merge and review flow files.")


@flow_app.command("show")
def show_command(path: Path = typer.Argument(..., help="A flow file."),
                 theta: float = typer.Option(0.3, "--theta", help="Mark the lookups that clear this threshold.")) -> None:
    """Render a flow as Markdown: sites, lookups, scores and binding sources."""
    typer.echo(show(load_flow(path), theta), nl=False)


@flow_app.command("merge")
def merge_command(a: Path = typer.Argument(...), b: Path = typer.Argument(...),
                  out: Path = typer.Option(..., "--out"),
                  weight: float = typer.Option(1.0, "--weight", help="Multiply B's counts by this.")) -> None:
    """Add two flows' counts (B weighted) and derive again: the flow of both bodies of sessions."""
    merged = merge(load_flow(a), load_flow(b), weight)
    save_flow(merged, out)
    typer.echo(f"wrote {out}")


@flow_app.command("diff")
def diff_command(old: Path = typer.Argument(...), new: Path = typer.Argument(...),
                 theta: float = typer.Option(0.3, "--theta"),
                 tolerance: float = typer.Option(0.05, "--tolerance", help="Report score changes beyond this.")) -> None:
    """Say what changed; exit 1 when a change needs review (a new read, lookup or binding source)."""
    d = diff(load_flow(old), load_flow(new), theta, tolerance)
    typer.echo(d.render(), nl=False)
    if d.needs_review:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(flow_app, name="flow")
