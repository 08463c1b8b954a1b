"""`stretto costs`: β, δ and the threshold θ* = δ/(β+δ) per app, from sessions and a replay."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.errors import StrettoError
from stretto_core.evaluate.loading import load_manifests
from stretto_core.evaluate.measure.costs import costs_by_app, render_costs
from stretto_core.evaluate.measure.tables import write_json
from stretto_core.evaluate.replay.inputs import load_episodes, load_replay


def costs(
    sessions: List[Path] = typer.Option(..., "--sessions", help="Session files, or folders searched for *.jsonl."),
    replay: Path = typer.Option(..., "--replay", help="A replay of these sessions (stretto replay --json)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the costs as JSON."),
    manifest: List[Path] = typer.Option([], "--manifest", help="Tool manifest to use instead of the sessions' own."),
) -> None:
    """Count a saved turn's value and a detour's cost in input tokens, and the threshold they set."""
    result = load_replay(replay)
    wanted = {row.session_id for row in result.episode_rows}
    episodes = [e for e in load_episodes(sessions, manifests=load_manifests(manifest)) if e.session_id in wanted]
    if not episodes:
        raise StrettoError(f"none of the sessions in {', '.join(map(str, sessions))} was replayed in {replay}")
    rows = costs_by_app(episodes, result)
    typer.echo(render_costs(rows))
    if json_out is not None:
        write_json(rows, json_out)
        typer.echo(f"wrote {json_out}")


def register(app: typer.Typer) -> None:
    app.command("costs")(costs)
