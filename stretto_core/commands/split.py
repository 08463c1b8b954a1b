"""`stretto split`: freeze the train/test split of the tasks some sessions ran, as a file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import List

import typer

from stretto_core.splits import DEFAULT_SEED, DEFAULT_TEST_FRACTION, make_split_file, save_split_file
from stretto_core.store import iter_session_files, read_session


def split(
    paths: List[Path] = typer.Argument(..., help="Session files, or folders searched for *.jsonl."),
    out: Path = typer.Option(..., "--out", help="Where to write the split file (JSON)."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the hash split (benchmarks without an official one)."),
    test_fraction: float = typer.Option(DEFAULT_TEST_FRACTION, "--test-fraction", help="Share of tasks held out."),
) -> None:
    """Write each app's train and test task ids: τ²-bench's official split, else a seeded hash split."""
    headers = [read_session(p).header for p in iter_session_files(list(paths))]
    frozen = make_split_file(headers, seed=seed, test_fraction=test_fraction)
    save_split_file(frozen, out)
    for app, sides in frozen.apps.items():
        n = len(sides.train) + len(sides.test)
        typer.echo(f"{app or '(no app)'}: {len(sides.train)} train, {len(sides.test)} test "
                   f"({len(sides.test) / n:.0%} held out)")
    unassigned = Counter(h.app or "(no app)" for h in headers) - Counter(
        h.app or "(no app)" for h in headers if _assigned(frozen, h))
    for app, n in sorted(unassigned.items()):
        typer.echo(f"{app}: {n} session(s) on neither side (no task id, or not in an official split)")
    typer.echo(f"wrote {out}")


def _assigned(frozen, header) -> bool:
    return bool(header.task_id) and frozen.side(header.app, header.task_id) != "none"


def register(app: typer.Typer) -> None:
    app.command("split")(split)
