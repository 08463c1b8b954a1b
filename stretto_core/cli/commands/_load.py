"""Loading sessions for a verb: files or folders, an optional split, problems reported on stderr."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import typer

from stretto_core.errors import StrettoError
from stretto_core.sessions.model import Session
from stretto_core.sessions.splits import filter_sessions, load_split_file
from stretto_core.sessions.store import LoadReport, load_sessions


def check_draws(draws: int) -> None:
    """`--draws` must be a positive number of bootstrap draws."""
    if draws < 1:
        raise StrettoError(f"--draws must be at least 1, not {draws}")


def load_for_verb(paths: Sequence[Path], split: str = "all", split_file: Path | None = None,
                  what: str = "sessions", apps: Sequence[str] = ()) -> list[Session]:
    """Every session under `paths` on the given side of the split (of the given apps, when any);
    bad lines are reported, not fatal."""
    report = LoadReport()
    sessions = load_sessions(list(paths), report)
    for problem in report.problems()[:20]:
        typer.echo(f"skipped: {problem}", err=True)
    if len(report.problems()) > 20:
        typer.echo(f"skipped: … and {len(report.problems()) - 20} more", err=True)
    frozen = load_split_file(split_file) if split_file is not None else None
    chosen = [s for s in filter_sessions(sessions, split, frozen) if not apps or s.header.app in apps]
    if not chosen:
        where = ", ".join(str(p) for p in paths)
        raise StrettoError(f"no {what} found in {where}" + (f" of --app {', '.join(repr(a) for a in apps)}" if apps else "")
                           + (f" on the {split} side of the split" if split not in ("all", "auto") else ""))
    return chosen
