"""`stretto calibrate`: Table 2 for any flow and sessions, or for two weighed replays on disk."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.cli.commands._load import check_draws
from stretto_core.errors import StrettoError
from stretto_core.evaluate.loading import load_manifests
from stretto_core.evaluate.measure.bootstrap import DEFAULT_DRAWS, DEFAULT_SEED
from stretto_core.evaluate.measure.calibration import calibrate_by_app, render_calibration
from stretto_core.evaluate.measure.plots import MIN_BIN_LOOKUPS, plot_reliability
from stretto_core.evaluate.measure.tables import write_json
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.replay.inputs import load_episodes, load_flow_model, load_replay
from stretto_core.cli.commands._values import check_outputs
from stretto_core.serve.option_values import check_fraction
from stretto_core.serve.speculator import DEFAULT_THETA
from stretto_core.sessions.splits import load_split_file


def calibrate_command(
    flow: Optional[Path] = typer.Option(None, "--flow", help="The flow to replay with (with --sessions)."),
    sessions: List[Path] = typer.Option([], "--sessions", help="Session files or folders to replay (with --flow)."),
    replays: List[Path] = typer.Option([], "--replays", help="Instead of --flow: the next-step and the "
                                       "use-before-write replays (stretto replay --weigh --json), in that order."),
    split: str = typer.Option("all", "--split", help="Which sessions: train, test, none or all."),
    split_file: Optional[Path] = typer.Option(None, "--split-file", help="A frozen split (stretto split) to use."),
    manifest: List[Path] = typer.Option([], "--manifest", help="Tool manifest to use instead of the sessions' own."),
    theta: float = typer.Option(DEFAULT_THETA, "--theta", help="Threshold the two speculators replay at."),
    draws: int = typer.Option(DEFAULT_DRAWS, "--draws", help="Bootstrap draws over tasks."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the bootstrap."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the rows (with reliability bins) as JSON."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write the reliability diagram (PNG)."),
) -> None:
    """ECE, Brier and AUC of the next-step and use-before-write scores against use before the next write."""
    check_draws(draws)
    check_fraction("--theta", theta)
    check_outputs(json_out, plot)
    if replays:
        if len(replays) != 2 or flow is not None or sessions:
            raise StrettoError("give either --flow and --sessions, or --replays NEXT.json --replays USE.json")
        next_replay, use_replay = (load_replay(p) for p in replays)
    else:
        if flow is None or not sessions:
            raise StrettoError("give --flow and --sessions (or two --replays)")
        frozen = load_split_file(split_file) if split_file else None
        load_flow_model(flow)  # a bad flow is reported before any session is read
        episodes = load_episodes(sessions, split=split, split_file=frozen, manifests=load_manifests(manifest))
        model = load_flow_model(flow)
        if not episodes:
            raise StrettoError(f"no sessions to replay in {', '.join(map(str, sessions))} (check --sessions and --split)")
        next_replay, use_replay = (replay_sessions(model, episodes, ReplayOptions(theta=theta, policy=p, weigh=True))
                                   for p in ("next", "use"))
    rows = calibrate_by_app(next_replay, use_replay, draws, seed)
    typer.echo(render_calibration(rows))
    typer.echo(f"\nIntervals: 95%, {draws:,} bootstrap draws over tasks, on use − next.")
    if json_out is not None:
        write_json(rows, json_out)
        typer.echo(f"wrote {json_out}")
    if plot is not None:
        plot_reliability(rows, plot)
        typer.echo(f"wrote {plot} (bins of at least {MIN_BIN_LOOKUPS} lookups)")


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_command)
