"""Which sessions a procedure may be compiled from: successful ones, of training tasks only.

Sessions come from stretto session files or folders, and from τ²-bench results files (ingested
on the fly). A session of a test task is never compiled from: an official split says so for
τ²-bench, and a session's own `labels["split"]` for the rest; finding one is an error, not a
silent skip, so a mistake in what was passed cannot go unnoticed. A task whose ticket differs
from a test task's only in its persona is treated the same way (solo tickets do not show it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from stretto_core.errors import StrettoError
from stretto_core.procedures.episodes import Episode, episodes_of
from stretto_core.sessions.model import Session
from stretto_core.sessions.splits import official_split

PERSONA = re.compile(r"\[PERSONA:[^\]]*\]$")


def fault_signature(task_id: str) -> str:
    """A τ² telecom task id without its persona: the ticket and initial state it gives in solo mode."""
    return PERSONA.sub("", task_id)


@dataclass
class SourceReport:
    """What was read, and what was left out and why."""

    read: int = 0
    kept: int = 0
    unsuccessful: int = 0
    no_ticket: int = 0
    notes: list[str] = field(default_factory=list)


def read_sessions(session_paths: Iterable[str | Path] = (), results_paths: Iterable[str | Path] = ()) -> list[Session]:
    """Sessions from stretto session files/folders and τ²-bench results files."""
    from stretto_core.sessions.ingest.common import ManifestSource
    from stretto_core.sessions.ingest.tau2 import convert
    from stretto_core.sessions.store import load_sessions

    sessions: list[Session] = []
    paths = [Path(p) for p in session_paths]
    if paths:
        sessions.extend(load_sessions(paths))
    manifests = ManifestSource()
    for path in results_paths:
        sessions.extend(convert(Path(path), manifests).sessions)
    return sessions


def test_tasks(app: str) -> set[str]:
    """The test tasks of an app's official split (empty when it has none)."""
    benchmark, _, domain = app.partition("/")
    try:
        return set(official_split(benchmark, domain).test)
    except StrettoError:
        return set()


def refuse_test_sessions(sessions: list[Session], app: str) -> None:
    """Raise when any session is of a test task (or a persona variant of one)."""
    test = test_tasks(app)
    signatures = {fault_signature(t) for t in test}
    bad = sorted({s.header.task_id or s.session_id for s in sessions
                  if s.header.labels.get("split") == "test"
                  or (s.header.task_id in test)
                  or (s.header.task_id is not None and fault_signature(s.header.task_id) in signatures)})
    if bad:
        raise StrettoError(f"{len(bad)} of the sessions are of test tasks, which a procedure is never compiled "
                           f"from (first: {bad[0]})")


def training_episodes(sessions: list[Session], app: str, tickets: Callable[[str], str | None] | None = None,
                      min_reward: float = 1.0, report: SourceReport | None = None) -> list[Episode]:
    """The successful training episodes of `sessions`, with their tickets; test tasks refused."""
    report = report if report is not None else SourceReport()
    refuse_test_sessions(sessions, app)
    report.read += len(sessions)
    good = [s for s in sessions if s.header.reward is not None and s.header.reward >= min_reward]
    report.unsuccessful += len(sessions) - len(good)
    episodes = []
    for episode in episodes_of(good, tickets):
        if not episode.ticket:
            report.no_ticket += 1
            continue
        episodes.append(episode)
    report.kept += len(episodes)
    return episodes
