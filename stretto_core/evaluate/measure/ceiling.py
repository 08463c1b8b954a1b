"""The read-only ceiling of any set of sessions (paper §4.1, Table 1 and Table 1b).

Every LLM turn is classed by `turns.classify_turns` (reply, write, read, or a read in the
ceiling), and the classes are pooled per app and over all apps, with the range across agents,
so a deployment can see how much a speculator could save before it learns one. The share of
ceiling turns with a single call is reported too: the paper's decomposition over reads is exact
for those (§2.3, 84% on τ²-bench).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence, TextIO

from pydantic import BaseModel

from stretto_core.errors import StrettoError
from stretto_core.evaluate.loading import sessions_with_manifests
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.evaluate.measure.tables import count, markdown_table, pct, pct_range
from stretto_core.sessions.model import Session
from stretto_core.sessions.splits import SplitFile
from stretto_core.sessions.turns import TurnClass, classify_turns
from stretto_core.progress import track

ALL = "All"
"""The name of the row pooled over every app."""

NO_APP = "(no app)"
NO_AGENT = "(unknown agent)"


@dataclass(frozen=True)
class SessionTurns:
    """One session's turn classes, with what it is grouped by."""

    app: str
    agent: str
    classes: tuple[TurnClass, ...]
    one_call_ceiling: int
    with_user_words: int
    """Turns in the ceiling once an argument may also be a value the user wrote."""


SOLO_SUFFIX = " (solo)"
"""Sessions where no user speaks are another regime (paper §2.5): they get a row of their own."""


def app_of(session: Session) -> str:
    """The row a session is pooled in: its app, marked `(solo)` when no user speaks."""
    app = session.header.app or NO_APP
    return app + SOLO_SUFFIX if session.header.solo else app


def measure_session(session: Session, manifest: ToolManifest) -> SessionTurns:
    """Class every LLM turn of a session and count its single-call turns in the ceiling."""
    classes = classify_turns(session, manifest)
    turns = session.llm_turns()
    one_call = sum(1 for turn, cls in zip(turns, classes) if cls is TurnClass.ceiling and len(turn.calls) == 1)
    widened = classify_turns(session, manifest, user_words=True).count(TurnClass.ceiling)
    return SessionTurns(app=app_of(session), agent=session.header.agent_model or NO_AGENT,
                        classes=tuple(classes), one_call_ceiling=one_call, with_user_words=widened)


class Range(BaseModel):
    """The lowest and highest share among groups (agents, or apps for the pooled row)."""

    low: float
    high: float


class CeilingRow(BaseModel):
    """Turn classes of one group: an app (or `All`), pooled over agents or of one agent."""

    app: str
    agent: str | None = None
    sessions: int
    agents: int
    turns: int
    replies: int
    writes: int
    reads: int
    """Turns whose calls are all reads, those in the ceiling included (as in Table 1)."""
    pure: int = 0
    """Turns whose calls change nothing but are not all reads (a `think`, a `calculate`): they end no
    read's reach, and no lookup makes them."""
    ceiling: int
    one_call_ceiling: int
    with_user_words: int
    """Turns in the ceiling when an argument may also be a value the user wrote (Table 1b's last column)."""
    reply_share: float
    write_share: float
    read_share: float
    ceiling_share: float
    with_user_words_share: float
    pure_share: float = 0.0
    one_call_share: float | None
    """Of the turns in the ceiling, the share with a single call; None when there are none."""
    ranges: dict[str, Range] = {}
    """Per share name, its range across agents (app rows) or across apps (the `All` row)."""


class CeilingReport(BaseModel):
    """The pooled table (one row per app, then `All`) and the same figures per agent."""

    rows: list[CeilingRow]
    per_agent: list[CeilingRow]
    range_min_sessions: int = 1
    """App rows' ranges count only agents with at least this many sessions in the app."""


SHARES = ("reply_share", "write_share", "pure_share", "read_share", "ceiling_share", "with_user_words_share")


@dataclass
class _Tally:
    sessions: int = 0
    turns: int = 0
    replies: int = 0
    writes: int = 0
    pure: int = 0
    reads: int = 0
    ceiling: int = 0
    one_call_ceiling: int = 0
    with_user_words: int = 0

    def add(self, item: SessionTurns) -> None:
        self.sessions += 1
        self.turns += len(item.classes)
        self.replies += item.classes.count(TurnClass.reply)
        self.writes += item.classes.count(TurnClass.write)
        self.pure += item.classes.count(TurnClass.pure)
        self.ceiling += item.classes.count(TurnClass.ceiling)
        self.reads += item.classes.count(TurnClass.read) + item.classes.count(TurnClass.ceiling)
        self.one_call_ceiling += item.one_call_ceiling
        self.with_user_words += item.with_user_words

    def row(self, app: str, agent: str | None, agents: int) -> CeilingRow:
        share = (lambda n: n / self.turns) if self.turns else (lambda n: 0.0)
        return CeilingRow(app=app, agent=agent, sessions=self.sessions, agents=agents, turns=self.turns,
                          replies=self.replies, writes=self.writes, pure=self.pure, pure_share=share(self.pure),
                          reads=self.reads, ceiling=self.ceiling,
                          one_call_ceiling=self.one_call_ceiling, with_user_words=self.with_user_words,
                          with_user_words_share=share(self.with_user_words), reply_share=share(self.replies),
                          write_share=share(self.writes), read_share=share(self.reads),
                          ceiling_share=share(self.ceiling),
                          one_call_share=self.one_call_ceiling / self.ceiling if self.ceiling else None)


def ceiling_report(items: Iterable[SessionTurns], range_min_sessions: int = 1) -> CeilingReport:
    """Pool sessions' turn classes per app and agent, per app, per agent over all apps, and in all.

    An app's range across agents counts only agents with at least `range_min_sessions` sessions
    there, so an agent seen once does not set it; the pooled figures count every session.
    """
    by_app_agent: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    for item in items:
        by_app_agent[(item.app, item.agent)].add(item)
    apps = sorted({app for app, _ in by_app_agent})
    agents = sorted({agent for _, agent in by_app_agent})

    per_agent: list[CeilingRow] = []
    rows: list[CeilingRow] = []
    for app in apps:
        pooled = _Tally()
        agent_rows = []
        for agent in agents:
            tally = by_app_agent.get((app, agent))
            if tally is None:
                continue
            _merge(pooled, tally)
            agent_rows.append(tally.row(app, agent, 1))
        per_agent.extend(agent_rows)
        ranged = [r for r in agent_rows if r.sessions >= range_min_sessions]
        rows.append(_with_ranges(pooled.row(app, None, len(agent_rows)), ranged))

    everything = _Tally()
    for agent in agents:
        over_apps = _Tally()
        for (app, who), tally in by_app_agent.items():
            if who == agent:
                _merge(over_apps, tally)
        per_agent.append(over_apps.row(ALL, agent, 1))
        _merge(everything, over_apps)
    rows.append(_with_ranges(everything.row(ALL, None, len(agents)), rows if len(rows) > 1 else []))
    return CeilingReport(rows=rows, per_agent=per_agent, range_min_sessions=range_min_sessions)


def _merge(into: _Tally, other: _Tally) -> None:
    for name in vars(other):
        setattr(into, name, getattr(into, name) + getattr(other, name))


def _with_ranges(row: CeilingRow, groups: Sequence[CeilingRow]) -> CeilingRow:
    """The row with each share's range over the groups that have turns (none for a single group)."""
    groups = [g for g in groups if g.turns]
    if len(groups) < 2:
        return row
    row.ranges = {name: Range(low=min(getattr(g, name) for g in groups), high=max(getattr(g, name) for g in groups))
                  for name in SHARES}
    return row


def _share_cell(name: str) -> Callable[[CeilingRow], str]:
    def cell(row: CeilingRow) -> str:
        rng = row.ranges.get(name)
        return pct_range(getattr(row, name), rng.low if rng else None, rng.high if rng else None)
    return cell


def render_table(report: CeilingReport) -> str:
    """Table 1 for these sessions: one row per app and `All`, ranges in brackets."""
    columns = {
        "App": "app",
        "Sessions": lambda r: count(r.sessions),
        "Agents": lambda r: count(r.agents),
        "Turns": lambda r: count(r.turns),
        "Replies": _share_cell("reply_share"),
        "Writes": _share_cell("write_share"),
        "Pure": _share_cell("pure_share"),
        "Reads": _share_cell("read_share"),
        "Ceiling": _share_cell("ceiling_share"),
        "One call": lambda r: pct(r.one_call_share, 0),
        "With user's words": _share_cell("with_user_words_share"),
    }
    if not any(r.pure for r in report.rows):
        del columns["Pure"]  # no turn of a pure tool (think, calculate): the paper's columns
    table = markdown_table(report.rows, columns, right=list(columns)[1:])
    agents = "agents" if report.range_min_sessions <= 1 else f"agents with {report.range_min_sessions}+ sessions"
    pure = ("Pure: turns of tools that change nothing (think, calculate); no read's reach ends at them.\n"
            if "Pure" in columns else "")
    note = (pure + f"Reads include the turns in the ceiling. Brackets: range across {agents} (app rows), across apps (All).\n"
            "One call: share of ceiling turns with a single call. With user's words: the ceiling when an\n"
            "argument may also be a value the user wrote.")
    return f"{table}\n\n{note}"


def measure_paths(paths: Sequence[str | Path], manifests: Sequence[ToolManifest] = (), split: str = "all",
                  split_file: SplitFile | None = None, warn: TextIO | None = sys.stderr) -> list[SessionTurns]:
    """Read every session under the paths, keep the chosen split, and class their turns.

    A manifest given for a session's app wins over the one in its header; a session with neither
    is an InputError naming its file. Lines a reader skipped are summed up on `warn`.
    """
    out = [measure_session(session, manifest)
           for session, manifest in track(sessions_with_manifests(paths, split, split_file, manifests, warn),
                                          "ceiling", unit="session")]
    if not out:
        where = ", ".join(str(p) for p in paths)
        raise StrettoError(f"no sessions to measure in {where}" + ("" if split == "all" else f" on the {split} side"))
    return out
