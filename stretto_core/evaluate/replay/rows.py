"""The rows a replay writes: one per episode, per lookup made, and per candidate weighed.

Every measurement (turns saved, detours, calibration, sweeps, learning curves, intervals) is
computed from these rows, so any number a report prints can be recomputed from the JSON on disk.
The top level of a replay's JSON holds the totals that other tools rely on:
`episodes, llm_turns, turns_saved, detours, lookups, ceiling_turns` (counts over all episodes).

A lookup is used, a detour, or (version 2) transient: the call it matched met a transient failure
(`sessions.failures`), so it answered nothing and is counted apart, neither used nor a detour.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

REPLAY_FORMAT_VERSION = 2
"""Version 2 added `transient` (episode rows, lookup rows, totals); version 1 is read with none."""


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class EpisodeRow(_Row):
    """One replayed episode."""

    session_id: str
    task_id: str | None = None
    agent: str | None = None
    app: str | None = None
    harness: str | None = None
    trial: int | None = None
    reward: float | None = None
    llm_turns: int = 0
    turns_saved: int = 0
    calls: int = 0
    calls_answered: int = 0
    ceiling_turns: int = 0
    lookups: int = 0
    used: int = 0
    detours: int = 0
    transient: int = 0
    """Lookups that matched a call whose recorded result was a transient failure (neither used nor detours)."""
    used_before_next_decision: int = 0
    saved_turn_tokens: float = 0.0
    detour_tokens: float = 0.0
    input_tokens: int | None = None
    env_mismatches: int | None = None
    """Environment replay only: recorded calls whose result there differed from the record."""


class LookupRow(_Row):
    """One lookup the speculator made in replay, and what became of it."""

    session_id: str
    task_id: str | None = None
    decision: int
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    site: str
    score: float
    reach: float
    binding: float
    used: bool
    detour: bool
    transient: bool = False
    """The call it matched met a transient failure: it answered nothing, and is no detour."""
    stand_in: bool = False
    before_next_decision: bool = False
    result_tokens: int = 0
    turns_left: int = 0
    response: int = 0
    """Which of the episode's tool responses (in the replay, from 0) the lookup rode on."""
    answered: bool = False
    """It spared a call; a used lookup that did not was the same call as one already in flight."""
    from_stand_in: bool = False
    """Record replay: an argument came only from a stand-in, so it answers nothing."""


class WeighedRow(_Row):
    """One candidate read scored at one decision, made or not, with whether the agent used it.

    `used` is the event the scores are calibrated against: the agent made this exact call
    before its next write.
    """

    session_id: str
    task_id: str | None = None
    decision: int
    tool: str
    site: str
    reach: float
    next_p: float
    binding: float
    score_use: float
    score_next: float
    used: bool
    made: bool = False
    response: int = 0


class ReplayConfig(_Row):
    flow: str | None = None
    policy: str = "use"
    theta: float = 0.3
    env: bool = False
    split: str | None = None
    weigh: bool = False
    strict_stand_ins: bool = False


class ReplayResult(_Row):
    """A replay's output: totals at the top level, then the rows."""

    stretto_replay: int = REPLAY_FORMAT_VERSION
    config: ReplayConfig
    episodes: int = 0
    llm_turns: int = 0
    turns_saved: int = 0
    detours: int = 0
    lookups: int = 0
    ceiling_turns: int = 0
    used: int = 0
    transient: int = 0
    episode_rows: list[EpisodeRow] = Field(default_factory=list)
    lookup_rows: list[LookupRow] = Field(default_factory=list)
    weighed_rows: list[WeighedRow] = Field(default_factory=list)

    def totals_from_rows(self) -> "ReplayResult":
        """Fill the top-level totals from the episode rows."""
        rows = self.episode_rows
        self.episodes = len(rows)
        self.llm_turns = sum(r.llm_turns for r in rows)
        self.turns_saved = sum(r.turns_saved for r in rows)
        self.detours = sum(r.detours for r in rows)
        self.lookups = sum(r.lookups for r in rows)
        self.ceiling_turns = sum(r.ceiling_turns for r in rows)
        self.used = sum(r.used for r in rows)
        self.transient = sum(r.transient for r in rows)
        return self
