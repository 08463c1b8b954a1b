"""`stretto sweep`: both speculators at each threshold, priced at the costs; a table and a plot."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.errors import StrettoError
from stretto_core.evaluate.loading import load_manifests
from stretto_core.evaluate.measure.costs import costs_by_app
from stretto_core.evaluate.measure.metrics import DomainCosts, by_app, costs_for, given_costs
from stretto_core.evaluate.measure.plots import plot_sweep
from stretto_core.evaluate.measure.sweep import (
    THETAS,
    SweepRow,
    best_theta,
    render_sweep,
    sweep,
    sweep_rows,
)
from stretto_core.evaluate.measure.tables import write_json
from stretto_core.evaluate.replay.inputs import load_episodes, load_flow_model
from stretto_core.cli.commands._values import check_amount, check_outputs
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.splits import load_split_file


def parse_thetas(text: str) -> list[float]:
    """`0.1,0.3,0.5` -> [0.1, 0.3, 0.5]; anything else is an error naming the bad value."""
    out = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            raise StrettoError(f"--thetas: {part.strip()!r} is not a number") from None
        if not 0.0 <= value <= 1.0:  # NaN too
            raise StrettoError(f"--thetas: {value} is not between 0 and 1")
        out.append(value)
    return out


def sweep_command(
    flow: Path = typer.Option(..., "--flow", help="The flow to replay with."),
    sessions: List[Path] = typer.Option(..., "--sessions", help="Session files or folders to replay."),
    split: str = typer.Option("all", "--split", help="Which sessions: train, test, none or all."),
    split_file: Optional[Path] = typer.Option(None, "--split-file", help="A frozen split (stretto split) to use."),
    manifest: List[Path] = typer.Option([], "--manifest", help="Tool manifest to use instead of the sessions' own."),
    thetas: str = typer.Option(",".join(f"{t:g}" for t in THETAS), "--thetas", help="Thresholds, comma-separated."),
    beta: Optional[float] = typer.Option(None, "--beta", help="A saved turn's value in input tokens (with --delta); "
                                         "default: counted from the sessions, else the paper's for the domain."),
    delta: Optional[float] = typer.Option(None, "--delta", help="A detour's cost in input tokens (with --beta)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the rows as JSON."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write utility and turns saved against θ (PNG)."),
) -> None:
    """Replay both speculators at each threshold: turns saved, detours per episode and utility, per app.

    θ = 0.3 is always replayed too: the costs are counted from its detours."""
    if (beta is None) != (delta is None):
        raise StrettoError("give both --beta and --delta, or neither")
    for option, value in (("--beta", beta), ("--delta", delta)):
        if value is not None:
            check_amount(option, value, positive=True)
    parse_thetas(thetas)
    check_outputs(json_out, plot)
    frozen = load_split_file(split_file) if split_file else None
    episodes = load_episodes(sessions, split=split, split_file=frozen, manifests=load_manifests(manifest))
    if not episodes:
        raise StrettoError(f"no sessions to replay in {', '.join(map(str, sessions))} (check --sessions and --split)")
    levels = sorted(set(parse_thetas(thetas)) | {DEFAULT_THETA})
    swept = sweep([(load_flow_model(flow), episodes)], levels)
    rows: list[SweepRow] = []
    priced: dict[str, DomainCosts | None] = {}
    parts = {policy: {t: by_app(r) for t, r in by_theta.items()} for policy, by_theta in swept.items()}
    for app in sorted(parts["use"][DEFAULT_THETA]):
        mine = [e for e in episodes if (e.header.app or "(no app)") == app]
        counted = costs_by_app(mine, parts["use"][DEFAULT_THETA][app])
        priced[app] = given_costs(beta, delta) if beta is not None and delta is not None else \
            costs_for(app, counted[0] if counted else None)
        shown = {p: {t: by[app] for t, by in per.items() if app in by} for p, per in parts.items()}
        rows.extend(sweep_rows(app, shown, priced[app]))
    typer.echo(render_sweep(rows))
    for app, costs in priced.items():
        star = f"θ* = {costs.theta_star:.3f} ({costs.note})" if costs else "no costs: utility left out"
        mine = [r for r in rows if r.group == app]
        typer.echo(f"{app}: utility peaks at θ = {best_theta(mine, 'use')} (use before write), "
                   f"{best_theta(mine, 'next')} (next step); {star}")
    if json_out is not None:
        write_json(rows, json_out)
        typer.echo(f"wrote {json_out}")
    if plot is not None:
        groups: dict[str, list[dict]] = {}
        for row in rows:
            groups.setdefault(row.group, []).append(row.model_dump())
        plot_sweep(groups, {a: (c.theta_star if c else None) for a, c in priced.items()}, plot)
        typer.echo(f"wrote {plot}")


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep_command)
