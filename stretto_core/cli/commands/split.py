"""`stretto split`: freeze the train/test split of the tasks some sessions ran, as a file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import List

import typer

from stretto_core.errors import StrettoError
from stretto_core.sessions.jsonfile import output_path
from stretto_core.sessions.splits import (
    DEFAULT_SEED,
    DEFAULT_TEST_FRACTION,
    make_split_file,
    save_split_file,
)
from stretto_core.sessions.store import iter_session_files, read_header


def split(
    paths: List[Path] = typer.Argument(..., help="Session files, or folders searched for *.jsonl."),
    out: Path = typer.Option(..., "--out", help="Where to write the split file (JSON)."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the hash split (benchmarks without an official one)."),
    test_fraction: float = typer.Option(DEFAULT_TEST_FRACTION, "--test-fraction", help="Share of tasks held out."),
    exact: bool = typer.Option(False, "--exact", help="Hold out exactly that share of each app's tasks (those "
                               "with the lowest hash draws); pass the file as --split-file wherever it matters."),
) -> None:
    """Write each app's train and test task ids: τ²-bench's official split, else a seeded hash split."""
    if not 0.0 < test_fraction < 1.0:  # NaN too
        raise StrettoError(f"--test-fraction must be between 0 and 1, not {test_fraction}")
    output_path(out, "split file")
    headers = [read_header(p) for p in iter_session_files(list(paths))]
    if not headers:
        raise StrettoError(f"no sessions found in {', '.join(map(str, paths))}")
    frozen = make_split_file(headers, seed=seed, test_fraction=test_fraction, exact=exact)
    save_split_file(frozen, out)
    for app, sides in frozen.apps.items():
        n = len(sides.train) + len(sides.test)
        typer.echo(f"{app or '(no app)'}: {len(sides.train)} train, {len(sides.test)} test "
                   f"({len(sides.test) / n:.0%} held out)")
    neither = Counter(h.app or "(no app)" for h in headers
                      if not h.task_id or frozen.side(h.app, h.task_id) == "none")
    for app, n in sorted(neither.items()):
        typer.echo(f"{app}: {n} session(s) on neither side (no task id, unverified, or not in an official split)")
    typer.echo(f"wrote {out}")


def register(app: typer.Typer) -> None:
    app.command("split")(split)
