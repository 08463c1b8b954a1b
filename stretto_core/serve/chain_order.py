"""Which of the reads that clear θ to make first: served, `keep` order; measured, the best score or the habit's.

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

`keep` order (served) makes the best score first unless another read that clears θ, one the habit
puts ahead of it (p(t | h) above the best's), keeps more of the others above θ when it is made
first than the best does (each scored one step ahead, its binding as it is). Two reads never go
ahead: a repeat of a tool this decision's chain already looked up (its habit counts the chain's
lookups as the agent's own steps, and would walk a customer's lines or a Slack workspace's channels
one lookup after another), and a read whose tool another candidate's binding drew a value from
(made first, its result may move that binding, which the look-ahead cannot see). `score` order is
Algorithm 1's best score first (the ablation's `score_order`); `habit` order makes the habit's
likeliest first whatever it drops or feeds (`habit_order`).
Measured (`docs/speculator.md`, "The order of a chain, learned from the habit"): AgentDojo travel
95 → 103 saved turns for 90 → 87 detours (5-fold cross-validation over its train tasks: 150 / 404
→ 168 / 392); every τ² domain, solo telecom included, and the other suites make the same lookups.
"""

from __future__ import annotations

from typing import Callable, Collection, Mapping, Sequence, TypeVar

from stretto_core.learn.bindings.model import split_source

SCORE_ORDER = "score"
HABIT_ORDER = "habit"
KEEP_ORDER = "keep"
ORDERS = (KEEP_ORDER, SCORE_ORDER, HABIT_ORDER)
SERVED_ORDER = KEEP_ORDER
"""The order a model is served in unless it says otherwise (its `chain_order`)."""

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


class Ordered:
    """A `FlowModel` served in `order` (one of `ORDERS`), everything else the wrapped model's."""

    def __init__(self, model: object, order: str) -> None:
        if order not in ORDERS:
            raise ValueError(f"chain order must be one of {', '.join(ORDERS)}, not {order!r}")
        self.model = model
        self.chain_order = order
        self.manifest = model.manifest  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:  # reach, read_tools, next_step, bind, threshold, flow, ...
        return getattr(self.model, name)


def keeping_first(cleared: Sequence[W], still_clears: Callable[[W, W], bool], habit: Mapping[str, float],
                  chained: Collection[str] = ()) -> W:
    """Of the candidates that clear θ (best score first), the one that goes first in `keep` order.

    `still_clears(first, other)`: whether `other` still clears θ scored after `first` is made.
    A candidate other than the best may go first only when the habit puts it ahead of the best,
    its tool is not in `chained` (this decision's lookups so far) and no other candidate's
    binding draws on its tool; it goes first when it keeps more of the others than the best does.
    """
    first = cleared[0]
    first_p = habit.get(first.tool, 0.0)  # type: ignore[attr-defined]
    best, best_kept = first, -1
    for cand in cleared:
        tool = cand.tool  # type: ignore[attr-defined]
        if cand is not first and (tool in chained or habit.get(tool, 0.0) <= first_p
                                  or feeds_another(cand, cleared)):
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

