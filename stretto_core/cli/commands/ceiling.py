"""`stretto ceiling`: Table 1 of the paper for any set of recorded sessions."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from stretto_core.cli.commands._values import check_at_least
from stretto_core.evaluate.loading import load_manifests
from stretto_core.sessions.jsonfile import output_path
from stretto_core.evaluate.measure.ceiling import ceiling_report, measure_paths, render_table
from stretto_core.evaluate.measure.tables import write_json
from stretto_core.sessions.splits import load_split_file


def ceiling(
    paths: List[Path] = typer.Argument(..., help="Session files, or folders searched for *.jsonl."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the figures, pooled and per agent, as JSON."),
    manifest: List[Path] = typer.Option([], "--manifest", help="Tool manifest to use instead of the sessions' own "
                                        "(repeat for several apps; each is matched by its app)."),
    split: str = typer.Option("all", "--split", help="Which sessions: train, test, none or all."),
    split_file: Optional[Path] = typer.Option(None, "--split-file", help="A frozen split (stretto split) to use."),
    range_min_sessions: int = typer.Option(1, "--range-min-sessions", help="Leave agents with fewer sessions "
                                           "in an app out of that app's range (they still count in the pooled figures)."),
) -> None:
    """Class every LLM turn (reply, write, read, ceiling) and print the read-only ceiling per app."""
    check_at_least("--range-min-sessions", range_min_sessions, 1)
    if json_out is not None:
        output_path(json_out, "JSON rows")
    frozen = load_split_file(split_file) if split_file else None
    items = measure_paths(paths, load_manifests(manifest), split=split, split_file=frozen)
    report = ceiling_report(items, range_min_sessions=range_min_sessions)
    typer.echo(render_table(report))
    if json_out is not None:
        write_json(report, json_out)


def register(app: typer.Typer) -> None:
    app.command("ceiling")(ceiling)
