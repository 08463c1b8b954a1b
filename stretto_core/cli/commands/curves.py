"""`stretto curves`: one agent's learning curves (Table 4) from a folder of sessions."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.errors import StrettoError
from stretto_core.evaluate.measure.bench_data import agent_key, domain_of
from stretto_core.evaluate.measure.curves import (
    ORDERS,
    SIZES,
    curve_rows,
    learning_curve,
    render_curves,
)
from stretto_core.evaluate.measure.plots import plot_curves
from stretto_core.evaluate.measure.tables import write_json
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.sessions.model import Session
from stretto_core.cli.commands._values import check_outputs
from stretto_core.serve.option_values import check_fraction
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.splits import load_split_file, split_of
from stretto_core.sessions.store import LoadReport, load_sessions


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise StrettoError(f"--sizes: {text!r} is not a comma-separated list of whole numbers") from None
    if any(n <= 0 for n in sizes):
        raise StrettoError(f"--sizes: every size must be positive, not {text!r}")
    return sizes


def _pick_domain(sessions: list[Session], agent: str, domain: str | None, sides: dict[str, str]) -> str:
    tested = sorted({domain_of(s.header) for s in sessions
                     if agent_key(s.header.agent_model) == agent and sides[s.session_id] == "test"})
    if domain is not None:
        if domain not in tested:
            raise StrettoError(f"--domain: agent {agent!r} has no test episodes in {domain!r} "
                               f"(it has in: {', '.join(tested) or 'none'})")
        return domain
    if len(tested) != 1:
        raise StrettoError(f"--agent {agent!r} has test episodes in {', '.join(tested) or 'no domain'}; "
                           "choose one with --domain")
    return tested[0]


def curves_command(
    paths: List[Path] = typer.Argument(..., help="Session files, or folders searched for *.jsonl."),
    agent: str = typer.Option(..., "--agent", help="The agent (its model; provider prefix and date are ignored)."),
    domain: Optional[str] = typer.Option(None, "--domain", help="The app (`tau2/airline`; `... (solo)` for solo "
                                         "runs); needed when the agent has test episodes in several."),
    split_file: Optional[Path] = typer.Option(None, "--split-file", help="A frozen split (stretto split) to use."),
    sizes: str = typer.Option(",".join(str(n) for n in SIZES), "--sizes", help="Sessions learned from, besides all."),
    orders: int = typer.Option(ORDERS, "--orders", help="Random orders (and prior draws) per size."),
    seed: int = typer.Option(0, "--seed", help="Seed of the orders and draws."),
    theta: float = typer.Option(DEFAULT_THETA, "--theta", help="Threshold of the replays."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write every run and the table's rows as JSON."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write turns saved and detours against n (PNG)."),
) -> None:
    """Learn from the first n of the agent's own, other agents', and a prior of others' plus its own train
    sessions; replay each on the agent's test episodes."""
    if orders < 1:
        raise StrettoError(f"--orders must be at least 1, not {orders}")
    _sizes(sizes)
    check_fraction("--theta", theta)
    check_outputs(json_out, plot)
    report = LoadReport()
    sessions = load_sessions(list(paths), report)
    if not sessions:
        raise StrettoError(f"no sessions found in {', '.join(map(str, paths))}")
    frozen = load_split_file(split_file) if split_file else None
    sides = {s.session_id: split_of(s.header, frozen) for s in sessions}
    key = agent_key(agent)
    chosen = _pick_domain(sessions, key, domain, sides)
    here = [s for s in sessions if domain_of(s.header) == chosen]
    own = [s for s in here if sides[s.session_id] == "train" and agent_key(s.header.agent_model) == key]
    others = [s for s in here if sides[s.session_id] == "train" and agent_key(s.header.agent_model) != key]
    test = prepare_sessions([s for s in here if sides[s.session_id] == "test" and agent_key(s.header.agent_model) == key])
    if not own and not others:
        raise StrettoError(f"{chosen}: no train sessions to learn from")
    typer.echo(f"{chosen}, {key}: {len(own)} own train sessions, {len(others)} of other agents, "
               f"{len(test)} test episodes")
    points = learning_curve(chosen, key, own, others, test, sizes=_sizes(sizes), orders=orders, seed=seed, theta=theta)
    rows = curve_rows(points)
    typer.echo(render_curves(rows, _sizes(sizes)))
    if json_out is not None:
        write_json(points, json_out)
        typer.echo(f"wrote {json_out} (every run)")
    if plot is not None:
        plot_curves({chosen: [r.model_dump() for r in rows]}, plot)
        typer.echo(f"wrote {plot}")


def register(app: typer.Typer) -> None:
    app.command("curves")(curves_command)
