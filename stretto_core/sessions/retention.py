"""Retention: recorded sessions are deleted once older than a set number of days.

Age is the header's `started_at` (every recorder stamps it), never a file's time, which a copy
or a restore changes. A session without a start time is kept and counted, never guessed at.
`Stretto(retain_days=N)` and `stretto proxy --retain-days N` prune their store when they start;
`stretto store prune --older-than 30d` prunes any folder.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from stretto_core.errors import StrettoError
from stretto_core.sessions.store import LoadReport, SessionStore

log = logging.getLogger("stretto.store")

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(d|days?|h|hours?)?\s*$", re.IGNORECASE)


def parse_age(text: str) -> float:
    """`30d`, `30`, `12h` -> days; a StrettoError naming the value otherwise."""
    match = _AGE.match(str(text))
    if not match:
        raise StrettoError(f"--older-than takes a number of days such as 30d (or hours: 12h), not {text!r}")
    amount = float(match.group(1))
    unit = (match.group(2) or "d").lower()
    return amount / 24 if unit.startswith("h") else amount


@dataclass
class Pruned:
    """What a prune did: the files deleted, and how many sessions had no start time (kept)."""

    deleted: list[Path] = field(default_factory=list)
    undated: int = 0
    failed: list[str] = field(default_factory=list)


def prune_sessions(directory: str | Path, older_than_days: float, *, now: datetime | None = None,
                   dry_run: bool = False) -> Pruned:
    """Delete the sessions under `directory` that started more than `older_than_days` days before
    `now` (default: the time now, UTC)."""
    if not older_than_days > 0:
        raise StrettoError(f"retention must be a positive number of days, not {older_than_days!r}")
    now = now or datetime.now(timezone.utc)
    cutoff = now - timedelta(days=older_than_days)
    store = SessionStore(directory)
    result = Pruned()
    report = LoadReport()
    everything = store.list(report=report)
    result.undated = sum(1 for info in everything if info.header.started_at is None)
    for info in store.list(until=cutoff, report=report):
        if dry_run:
            result.deleted.append(info.path)
            continue
        try:
            info.path.unlink()
            result.deleted.append(info.path)
        except OSError as exc:
            result.failed.append(f"{info.path}: {exc.strerror or exc}")
    return result


def prune_at_start(directory: Path, retain_days: float) -> None:
    """What `Stretto(retain_days=N)` does when it starts: prune, and say so on the log."""
    if not directory.is_dir():
        return
    pruned = prune_sessions(directory, retain_days)
    if pruned.deleted:
        log.info("stretto: deleted %d sessions older than %g days from %s", len(pruned.deleted), retain_days,
                 directory)
    for problem in pruned.failed:
        log.warning("stretto: could not delete an expired session: %s", problem)
