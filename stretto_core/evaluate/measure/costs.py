"""The costs that set the threshold: a saved turn's value β, a detour's cost δ, θ* = δ/(β+δ).

Both are counted in each agent's own input tokens (paper Appendix B):

    β = mean over the turns in the read-only ceiling of
        (the turn's input tokens + its calls' tokens × the LLM turns after it)
    δ = mean over a replay's detours of (the detour's result tokens × the LLM turns left after
        the result that prompted it)

A call's or result's tokens are its characters over four. β needs the turn's recorded input
tokens, so it is counted only in episodes that report them, and δ over the same episodes (the
paper pools "the agents whose episodes report tokens"); where no episode of an app reports
tokens, δ is counted over all its detours and β and θ* are unknown.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from pydantic import BaseModel

from stretto_core.evaluate.measure.tables import count, markdown_table
from stretto_core.evaluate.replay.episode import PreparedEpisode
from stretto_core.evaluate.replay.rows import LookupRow, ReplayResult
from stretto_core.evaluate.replay.tally import saved_turn_value

ALL = "All"


class AppCosts(BaseModel):
    """β, δ and θ* of one app (or `All`), with what they were counted over."""

    app: str
    episodes: int
    episodes_with_tokens: int
    ceiling_turns: int
    """Turns in the ceiling β was counted over."""
    detours: int
    """Detours δ was counted over."""
    beta: float | None
    delta: float | None
    theta_star: float | None


def theta_star(beta: float | None, delta: float | None) -> float | None:
    """θ* = δ/(β+δ): the probability of use above which a lookup is worth making (Proposition 3)."""
    if beta is None or delta is None or beta + delta <= 0:
        return None
    return delta / (beta + delta)


def ceiling_turn_values(episode: PreparedEpisode) -> list[float]:
    """β of each turn in the episode's ceiling that reports its input tokens."""
    return [saved_turn_value(episode, n) for n, turn in enumerate(episode.turns)
            if turn.ceiling and turn.input_tokens is not None]


def detour_cost(row: LookupRow) -> float:
    """δ of one detour: its result's tokens carried through every LLM turn left."""
    return float(row.result_tokens * row.turns_left)


@dataclass
class _Pool:
    episodes: int = 0
    with_tokens: int = 0
    betas: list[float] = field(default_factory=list)
    deltas: list[float] = field(default_factory=list)
    deltas_without_tokens: list[float] = field(default_factory=list)

    def add(self, episode: PreparedEpisode, detours: Iterable[LookupRow]) -> None:
        self.episodes += 1
        costs = [detour_cost(r) for r in detours]
        if episode.input_tokens is None:
            self.deltas_without_tokens.extend(costs)
            return
        self.with_tokens += 1
        self.betas.extend(ceiling_turn_values(episode))
        self.deltas.extend(costs)

    def row(self, app: str) -> AppCosts:
        deltas = self.deltas if self.with_tokens else self.deltas_without_tokens
        beta = sum(self.betas) / len(self.betas) if self.betas else None
        delta = sum(deltas) / len(deltas) if deltas else None
        return AppCosts(app=app, episodes=self.episodes, episodes_with_tokens=self.with_tokens,
                        ceiling_turns=len(self.betas), detours=len(deltas), beta=beta, delta=delta,
                        theta_star=theta_star(beta, delta))


def costs_by_app(episodes: Sequence[PreparedEpisode], replay: ReplayResult) -> list[AppCosts]:
    """β, δ and θ* per app and pooled, from sessions and a replay of (some of) them.

    Detours are matched to sessions by session id; a replayed episode not among the sessions is
    not counted.
    """
    detours: dict[str, list[LookupRow]] = defaultdict(list)
    for row in replay.lookup_rows:
        if row.detour:
            detours[row.session_id].append(row)
    pools: dict[str, _Pool] = defaultdict(_Pool)
    everything = _Pool()
    for episode in episodes:
        mine = detours.get(episode.session_id, [])
        pools[episode.header.app or "(no app)"].add(episode, mine)
        everything.add(episode, mine)
    rows = [pools[app].row(app) for app in sorted(pools)]
    if len(rows) != 1:
        rows.append(everything.row(ALL))
    return rows


def render_costs(rows: Sequence[AppCosts]) -> str:
    """The costs as a Markdown table."""
    def num(value: float | None, digits: int = 0) -> str:
        return "–" if value is None else f"{value:,.{digits}f}"

    columns = {
        "App": "app",
        "Episodes (with tokens)": lambda r: f"{count(r.episodes)} ({count(r.episodes_with_tokens)})",
        "β": lambda r: num(r.beta),
        "over turns": lambda r: count(r.ceiling_turns),
        "δ": lambda r: num(r.delta),
        "over detours": lambda r: count(r.detours),
        "θ*": lambda r: num(r.theta_star, 3),
    }
    table = markdown_table(rows, columns, right=[h for h in columns if h != "App"])
    return (f"{table}\n\nβ: a ceiling turn's input tokens plus its calls' tokens over the turns after it. "
            "δ: a detour's result tokens times the turns left. θ* = δ/(β+δ). In input tokens, four "
            "characters a token.")
