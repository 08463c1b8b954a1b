"""A replay's headline figures per app, as Table 3 of the paper prints them.

Turns saved as a share of LLM turns, detours per episode, the share of the read-only ceiling the
replay took (turns saved over ceiling turns), and the lookups made and used. Every figure is a
ratio of the rows' counts, so it can be recomputed from the replay's JSON.
"""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel

from stretto_core.evaluate.measure.tables import count, markdown_table, pct
from stretto_core.evaluate.replay.rows import EpisodeRow, ReplayResult

ALL = "All"


class SummaryRow(BaseModel):
    app: str
    episodes: int
    llm_turns: int
    turns_saved: int
    ceiling_turns: int
    lookups: int
    used: int
    detours: int
    transient: int = 0
    """Lookups that matched a call met by a transient failure: neither used nor detours, never saved."""
    saved_share: float | None
    detours_per_episode: float | None
    ceiling_share: float | None
    """Turns saved over the turns in the read-only ceiling (may pass 1: a read can answer across a
    write in an environment replay, or a turn outside the ceiling's strict rule)."""


def summarize(result: ReplayResult) -> list[SummaryRow]:
    """One row per app, then `All` when there are several apps."""
    by_app: dict[str, list[EpisodeRow]] = defaultdict(list)
    for row in result.episode_rows:
        by_app[row.app or "(no app)"].append(row)
    rows = [_summary(app, by_app[app]) for app in sorted(by_app)]
    if len(rows) != 1:
        rows.append(_summary(ALL, list(result.episode_rows)))
    return rows


def _summary(app: str, rows: list[EpisodeRow]) -> SummaryRow:
    turns = sum(r.llm_turns for r in rows)
    saved = sum(r.turns_saved for r in rows)
    ceiling = sum(r.ceiling_turns for r in rows)
    detours = sum(r.detours for r in rows)
    return SummaryRow(app=app, episodes=len(rows), llm_turns=turns, turns_saved=saved, ceiling_turns=ceiling,
                      lookups=sum(r.lookups for r in rows), used=sum(r.used for r in rows), detours=detours,
                      transient=sum(r.transient for r in rows),
                      saved_share=saved / turns if turns else None,
                      detours_per_episode=detours / len(rows) if rows else None,
                      ceiling_share=saved / ceiling if ceiling else None)


def render_summary(result: ReplayResult) -> str:
    """The summary as a Markdown table, with the replay's settings under it."""
    columns = {
        "App": "app",
        "Episodes": lambda r: count(r.episodes),
        "LLM turns": lambda r: count(r.llm_turns),
        "Turns saved": lambda r: f"{count(r.turns_saved)} ({pct(r.saved_share)})",
        "Detours / episode": lambda r: "–" if r.detours_per_episode is None else f"{r.detours_per_episode:.2f}",
        "Share of ceiling": lambda r: pct(r.ceiling_share),
        "Lookups (used)": lambda r: f"{count(r.lookups)} ({count(r.used)})",
        "Transient (apart)": lambda r: count(r.transient),
    }
    table = markdown_table(summarize(result), columns,
                           right=["Episodes", "LLM turns", "Turns saved", "Detours / episode",
                                  "Share of ceiling", "Lookups (used)", "Transient (apart)"])
    cfg = result.config
    how = "in the environment" if cfg.env else "from the record"
    note = (f"Replayed {how}, policy {cfg.policy}, θ = {cfg.theta:g}"
            f"{', split ' + cfg.split if cfg.split else ''}. Share of ceiling: turns saved over the "
            "turns in the read-only ceiling. Transient: lookups that matched a call whose result was a "
            "transient failure (`Error: 503`, a timeout, an error a retry did not meet again), counted apart "
            "and never as saved.")
    if not cfg.env:
        note += " Detours from the record are a lower bound."
    return f"{table}\n\n{note}"
