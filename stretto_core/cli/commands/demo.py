"""`stretto demo`: record, learn, show, replay and serve on the embedded shop (no data, server or key)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from stretto_core.demo.run import HARNESSES, demo, load_harness, render, save_numbers
from stretto_core.errors import StrettoError
from stretto_core.paths import stretto_home
from stretto_core.serve.option_values import check_fraction


def demo_command(
    home: Optional[Path] = typer.Option(None, "--home", help="Where to keep the demo's sessions and flow "
                                                           "(default: $STRETTO_HOME/demo)."),
    sessions: int = typer.Option(60, "--sessions", help="Sessions to record."),
    train: int = typer.Option(40, "--train", help="Of which this many are learned from; the rest are held out."),
    theta: float = typer.Option(0.3, "--theta", help="The speculator's threshold."),
    show_flow: bool = typer.Option(False, "--show-flow", help="Also print the learned flow."),
    harness: Optional[str] = typer.Option(None, "--harness", help="Where the agent runs: "
                                          f"{' or '.join(HARNESSES)} (default: the OpenAI Agents SDK when "
                                          "installed, else the built-in harness)."),
) -> None:
    """Run stretto end to end on a built-in shop served by a scripted agent."""
    check_fraction("--theta", theta)
    if sessions < 2 or not 1 <= train < sessions:
        raise StrettoError(f"--sessions must be at least 2 and --train from 1 to one less (not {sessions} and {train})")
    folder = home or stretto_home() / "demo"
    if folder.exists() and not folder.is_dir():
        raise StrettoError(f"{folder}: is a file, not a folder for the demo (--home)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StrettoError(f"{folder}: cannot make the demo's folder: {exc.strerror or exc}") from exc
    runner, note = load_harness(harness)
    if note:
        typer.echo(f"stretto demo: {note}", err=True)
    numbers = demo(folder, sessions, train, theta, runner)
    if show_flow:
        typer.echo(numbers["flow_show"])
    typer.echo(render(numbers), nl=False)
    save_numbers(numbers, folder / "demo.json")
    typer.echo(f"every number above:               {folder / 'demo.json'}")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo_command)
