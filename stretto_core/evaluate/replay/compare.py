"""How a replay from the record compares with an environment replay of the same episodes.

The record's savings are exact but its detours a lower bound (paper §3, Appendix D: on τ²-bench
the record counts 96.7% of the environment's saved turns and 55–72% of its detours, and 93–95%
of episodes save exactly the same turns). This module computes those figures for any two replays,
matched by session id, pooled and per app.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel

from stretto_core.errors import StrettoError
from stretto_core.evaluate.replay.rows import EpisodeRow, ReplayResult

ALL = "All"


class ComparisonRow(BaseModel):
    """Record against environment over the episodes both replayed (one app, or all)."""

    app: str
    episodes: int
    record_turns_saved: int
    env_turns_saved: int
    turns_saved_ratio: float | None
    """Record's saved turns over the environment's (None when the environment saved none)."""
    same_turns_share: float | None
    """Share of episodes whose saved turns are the same number in both replays."""
    record_detours: int
    env_detours: int
    detours_ratio: float | None
    """Record's detours over the environment's: the record's are a lower bound."""


class ReplayComparison(BaseModel):
    rows: list[ComparisonRow]
    only_record: list[str]
    only_env: list[str]


def compare_replays(record: ReplayResult, env: ReplayResult) -> ReplayComparison:
    """Compare two replays episode by episode (matched by session id), per app and pooled."""
    if record.config.env or not env.config.env:
        raise StrettoError("compare_replays takes a replay from the record first, then an environment replay")
    rec = {r.session_id: r for r in record.episode_rows}
    live = {r.session_id: r for r in env.episode_rows}
    pairs: dict[str, list[tuple[EpisodeRow, EpisodeRow]]] = defaultdict(list)
    for sid, row in rec.items():
        if sid in live:
            pairs[row.app or "(no app)"].append((row, live[sid]))
    rows = [_row(app, pairs[app]) for app in sorted(pairs)]
    rows.append(_row(ALL, [p for app in sorted(pairs) for p in pairs[app]]))
    return ReplayComparison(rows=rows, only_record=sorted(set(rec) - set(live)),
                            only_env=sorted(set(live) - set(rec)))


def _row(app: str, pairs: list[tuple[EpisodeRow, EpisodeRow]]) -> ComparisonRow:
    rs = sum(a.turns_saved for a, _ in pairs)
    es = sum(b.turns_saved for _, b in pairs)
    rd = sum(a.detours for a, _ in pairs)
    ed = sum(b.detours for _, b in pairs)
    same = sum(1 for a, b in pairs if a.turns_saved == b.turns_saved)
    return ComparisonRow(app=app, episodes=len(pairs), record_turns_saved=rs, env_turns_saved=es,
                         turns_saved_ratio=rs / es if es else None,
                         same_turns_share=same / len(pairs) if pairs else None,
                         record_detours=rd, env_detours=ed, detours_ratio=rd / ed if ed else None)
