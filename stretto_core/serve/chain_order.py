"""Which of the reads that clear θ to make first: the best score (served), or the habit's next (measured).

Proposition 3 makes every read with q ≥ θ worth making; the order among them matters only through
what the speculator conditions on afterwards. Algorithm 1 appends each lookup to the history as
the agent's own next step and scores the rest again on that history. That conditioning is faithful
when the lookup is the step the agent would take next, and not when it is a read the agent makes
later: after a city's car rental companies, the agents of AgentDojo travel list the car types
next (habit 0.57) and read the reviews at some point before their next write (reach 0.89, habit
0.11). Made first because its q is largest, the reviews became the history's last step, and the
car types, scored again after "companies, reviews", fell from 0.45 to 0.01 (agents that read
reviews straight after the listing seldom list types afterwards); the next-step speculator,
taking types first, made both.

`habit` order makes first, among the reads that clear θ, the one with the largest next-step
probability p(t | h) (ties to the larger q), so the chain stays on the agent's likeliest path;
the set of reads that clear θ at each decision is unchanged. It is not served by default: a model
opts in with `chain_order = "habit"` (the ablation's `habit_order` variant). Measured
(`docs/speculator.md`, "Travel: the order of a chain"): AgentDojo travel 95 → 103 saved turns,
detours 90 → 87 (5-fold cross-validation over travel's train tasks: 176 → 192 saved, 303 → 301
detours), τ² retail, airline and AgentDojo banking, slack, workspace the same lookups, but solo
telecom 72 → 76 saved for 138 → 178 detours: there the habit walks a customer's lines one
`get_details_by_id` after another, lookups used a quarter of the time.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence, TypeVar

from stretto_core.learn.bindings.model import split_source

SCORE_ORDER = "score"
HABIT_ORDER = "habit"
KEEP_ORDER = "keep"

CHAIN_SCORING = "chain"
"""A read is scored on the history with the chain's lookups as the agent's own steps (Algorithm 1)."""
AGENT_SCORING = "agent"
"""A read not yet in the chain is scored on the agent's own history; a repeat of a chain's tool on the chain's."""

W = TypeVar("W")


def habit_first(cleared: Sequence[W], habit: Mapping[str, float]) -> W:
    """Of the candidates that clear θ (best score first), the one the habit puts next.

    Each candidate has `.tool` and `.score`; ties on the habit go to the larger score, then to
    the earlier in `cleared`.
    """
    best = cleared[0]
    best_key = (habit.get(best.tool, 0.0), best.score)  # type: ignore[attr-defined]
    for cand in cleared[1:]:
        key = (habit.get(cand.tool, 0.0), cand.score)  # type: ignore[attr-defined]
        if key > best_key:
            best, best_key = cand, key
    return best


class HabitOrdered:
    """A `FlowModel` served with `habit` order, everything else the wrapped model's."""

    chain_order = HABIT_ORDER

    def __init__(self, model: object) -> None:
        self.model = model
        self.manifest = model.manifest  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:  # reach, read_tools, next_step, bind, threshold, flow, ...
        return getattr(self.model, name)


def keeping_first(cleared: Sequence[W], still_clears: Callable[[W, W], bool]) -> W:
    """Of the candidates that clear θ (best score first), the first that, made now, leaves the
    most of the others still clearing θ when they are scored again after it.

    `still_clears(first, other)`: whether `other` clears θ scored after `first` is made. With no
    candidate keeping more than the best does, the best goes first: the order changes only where
    the best would drop a read that another order keeps.
    """
    best, best_kept = cleared[0], -1
    for cand in cleared:
        if cand is not cleared[0] and feeds_another(cand, cleared):
            continue
        kept = sum(1 for other in cleared if other is not cand and still_clears(cand, other))
        if kept > best_kept:
            best, best_kept = cand, kept
    return best


def feeds_another(cand: W, cleared: Sequence[W]) -> bool:
    """Whether another candidate's binding drew a value from a result of `cand`'s tool: then making
    `cand` first may move that binding (the next line of a customer's, not the one the agent
    reads), which the look-ahead, holding the others' bindings as they are, cannot see."""
    tool = cand.tool  # type: ignore[attr-defined]
    return any(split_source(src)[0] == tool for other in cleared if other is not cand
               for src in other.sources)  # type: ignore[attr-defined]


class KeepOrdered:
    """A `FlowModel` served with `keep` order, everything else the wrapped model's."""

    chain_order = KEEP_ORDER

    def __init__(self, model: object) -> None:
        self.model = model
        self.manifest = model.manifest  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.model, name)


class AgentScored:
    """A `FlowModel` whose chains score a read not yet in the chain on the agent's own history."""

    chain_scoring = AGENT_SCORING

    def __init__(self, model: object) -> None:
        self.model = model
        self.manifest = model.manifest  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.model, name)
