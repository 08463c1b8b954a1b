"""`stretto flow show|merge|diff`: read, combine and review flow files."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from stretto_core.errors import StrettoError
from stretto_core.flow.ir import load_flow, merge, save_flow
from stretto_core.flow.review import diff, show
from stretto_core.sessions.jsonfile import output_path

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
    if not (math.isfinite(weight) and weight > 0):
        raise StrettoError(f"--weight must be a finite number above 0, not {weight}")
    output_path(out, "flow")
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


@flow_app.command("threshold")
def threshold_command(path: Path = typer.Argument(..., help="A flow file, changed in place unless --out."),
                      site: str = typer.Option(..., "--site", help="The site: the tool whose result the lookups "
                                                                   "follow, e.g. `get_user_details`, "
                                                                   "`get_user_details (failed)`, or `start`."),
                      theta: float = typer.Option(..., "--theta", help="θ at that site; above 1 switches it off."),
                      out: Path = typer.Option(None, "--out", help="Write the changed flow here instead.")) -> None:
    """Set θ at one site (the speculator's threshold there), e.g. to hold back a site that detours."""
    if not (math.isfinite(theta) and theta >= 0):
        raise StrettoError(f"--theta must be a finite number ≥ 0 (above 1 switches the site off), not {theta}")
    output_path(out or path, "flow")
    flow = load_flow(path)
    flow.thresholds = {**flow.thresholds, site: theta}
    save_flow(flow, out or path)
    typer.echo(f"θ at {site} is {theta:g} in {out or path}")


def register(app: typer.Typer) -> None:
    from stretto_core.cli.commands._promote import add_promote

    add_promote(flow_app)
    app.add_typer(flow_app, name="flow")
