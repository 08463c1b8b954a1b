"""The habit and the reach: hierarchical Dirichlet back-off counts over abstract steps (paper §2.4).

Contexts are the last j ≤ ORDER step symbols (`steps.py`), left-padded with START, so the
first step of a session is seen after (START, START). Both estimates count the same contexts.

The habit, the next action after context h_j:

    p_j(a | h_j) = (n(h_j, a) + α p_{j-1}(a | h_{j-1})) / (n(h_j) + α),   p_{-1}(a) = 1/V

n(h_j, a) counts the training steps with action a that came right after h_j, and n(h_j) all
steps after h_j. V is the vocabulary size (the app's tools plus REPLY). Prediction walks
j = 0..ORDER and updates only at levels whose context was seen (n(h_j) > 0), so an unseen longer
context keeps the shorter level's value. Each level is the posterior predictive of a
Dirichlet–multinomial whose prior mean is the shorter context's predictive (MacKay & Peto 1995).

The reach, the use of action a before the agent's next write:

    r_j(a | h_j) = (m(h_j, a) + α r_{j-1}(a | h_{j-1})) / (n(h_j) + α),   r_{-1}(a) = 1/V

m(h_j, a) counts the training steps t after h_j from which the agent called a before its next
write: the window of step t holds the distinct actions of steps t, t+1, … up to but excluding
the first step whose action is a write (the step's own action included; replies do not end the
window; a write step's window is empty). Each action is its own Beta–Bernoulli backed off the
same way, so the r_j(· | h_j) need not sum to one.

Sufficient statistics. Every step has exactly one full-order context, and its level-j context
is that context's last j symbols, so the counts at every level are sums of the full-order
counts. Only those are stored; `habit_level(j)` and `reach_level(j)` marginalize them.

Weights and exact merging. Counts are integers kept per weight: a source of sessions enters as
a power prior by a weight w (1,184 sessions weighed as 100: w = 100/1184), and the effective
count is Σ_w w · n_w, summed in order of w. Merging adds the integers of equal weights, so
learning from two halves and merging equals learning at once exactly, for any weights, and the
serialized form (sorted, `CountsModel`) is byte-identical.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Optional

from pydantic import BaseModel, ConfigDict

from stretto_core.learn.steps import REPLY

ORDER = 2
"""The habit's and the reach's context length: the last two steps (paper §2.4)."""

START = "<start>"
"""The padding symbol before a session's first step; no step symbol can equal it (no `/`)."""

CACHE_LIMIT = 1 << 16
"""Prediction tables cached per model before the cache is cleared; contexts are few in practice."""

Context = tuple[str, ...]
_Table = dict[Context, dict[str, int]]


class _Raw:
    """Integer counts of one weight: full-order context -> action -> count, and sessions seen."""

    __slots__ = ("habit", "reach", "sequences")

    def __init__(self) -> None:
        self.habit: _Table = {}
        self.reach: _Table = {}
        self.sequences = 0

    def add_from(self, other: "_Raw") -> None:
        for mine, theirs in ((self.habit, other.habit), (self.reach, other.reach)):
            for ctx, row in theirs.items():
                target = mine.get(ctx)
                if target is None:
                    mine[ctx] = dict(row)
                    continue
                for action, n in row.items():
                    target[action] = target.get(action, 0) + n
        self.sequences += other.sequences


# -- the serialized form -------------------------------------------------------------------------

CountRow = tuple[list[str], list[tuple[str, int]]]
"""One context's counts as written: [context symbols, [[action, count], …]], sorted."""


class CountsGroupModel(BaseModel):
    """The integer counts of one weight, as written."""

    model_config = ConfigDict(extra="forbid")

    weight: float
    sequences: int
    habit: list[CountRow]
    reach: list[CountRow]


class CountsModel(BaseModel):
    """The counts as written into a flow: the order and one group per weight, sorted by weight."""

    model_config = ConfigDict(extra="forbid")

    order: int = ORDER
    groups: list[CountsGroupModel] = []


def _rows(table: _Table) -> list[CountRow]:
    return [(list(ctx), sorted(table[ctx].items())) for ctx in sorted(table)]


def _table(rows: list[CountRow], order: int) -> _Table:
    out: _Table = {}
    for ctx, pairs in rows:
        if len(ctx) != order:
            raise ValueError(f"a context of {len(ctx)} symbols in counts of order {order}")
        out[tuple(ctx)] = {a: int(n) for a, n in pairs}
    return out


# -- learning ------------------------------------------------------------------------------------

class Counts:
    """The learned counts of the habit and the reach; the sufficient statistics of both.

    Learn with `add` (one session's steps at a time) or `learn`; combine with `merged`; predict
    with `BackoffModel(counts, alpha, vocab_size)`.
    """

    def __init__(self, order: int = ORDER) -> None:
        if order < 0:
            raise ValueError("the order of the counts must be at least 0")
        self.order = order
        self._groups: dict[float, _Raw] = {}

    # learning
    def add(self, symbols: Sequence[str], actions: Sequence[str], is_write: Callable[[str], bool],
            weight: float = 1.0) -> None:
        """Count one session: its step symbols and their actions, in order.

        `is_write(action)` says which actions end a reach window (the manifest's writes);
        `weight` is the weight of this session's counts.
        """
        n = len(symbols)
        if n != len(actions):
            raise ValueError(f"{n} symbols but {len(actions)} actions")
        raw = self._group(weight)
        if raw is None:
            return
        raw.sequences += 1
        order = self.order
        padded = (START,) * order + tuple(symbols)
        habit, reach = raw.habit, raw.reach
        writes: dict[str, bool] = {}
        window: set[str] = set()
        for t in range(n - 1, -1, -1):  # backwards, so the window is built as we go
            ctx = padded[t:t + order]
            action = actions[t]
            row = habit.get(ctx)
            if row is None:
                habit[ctx] = {action: 1}
            else:
                row[action] = row.get(action, 0) + 1
            write = writes.get(action)
            if write is None:
                write = writes[action] = bool(is_write(action))
            if write:
                window.clear()
                continue
            window.add(action)
            row = reach.get(ctx)
            if row is None:
                reach[ctx] = dict.fromkeys(window, 1)
            else:
                for a in window:
                    row[a] = row.get(a, 0) + 1

    @classmethod
    def learn(cls, sequences: Iterable[tuple[Sequence[str], Sequence[str]]],
              is_write: Callable[[str], bool], weight: float = 1.0, order: int = ORDER) -> "Counts":
        """Counts of many sessions, each given as (symbols, actions), all of one weight."""
        counts = cls(order)
        for symbols, actions in sequences:
            counts.add(symbols, actions, is_write, weight)
        return counts

    def _group(self, weight: float) -> Optional[_Raw]:
        weight = float(weight)
        if not weight >= 0.0 or weight == float("inf"):
            raise ValueError(f"a weight must be a finite number ≥ 0, not {weight!r}")
        if weight == 0.0:
            return None
        raw = self._groups.get(weight)
        if raw is None:
            raw = self._groups[weight] = _Raw()
        return raw

    def merged(self, other: "Counts", weight: float = 1.0) -> "Counts":
        """These counts plus `other`'s weighed by `weight` (a power prior when below one)."""
        if other.order != self.order:
            raise ValueError(f"cannot merge counts of order {other.order} into order {self.order}")
        out = Counts(self.order)
        for w, raw in self._groups.items():
            out._group(w).add_from(raw)  # type: ignore[union-attr]
        for w, raw in other._groups.items():
            target = out._group(w * float(weight))
            if target is not None:
                target.add_from(raw)
        return out

    # reading
    @property
    def weights(self) -> list[float]:
        """The weights that counts were added with, ascending."""
        return sorted(self._groups)

    def sequences(self) -> float:
        """The weighed number of sessions counted (1,184 sessions weighed as 100 count 100)."""
        return sum(w * self._groups[w].sequences for w in self.weights)

    def steps(self) -> float:
        """The weighed number of steps counted."""
        level = self.habit_level(0).get(())
        return level[0] if level else 0.0

    def actions(self) -> set[str]:
        """Every action seen in training."""
        return {a for raw in self._groups.values() for row in raw.habit.values() for a in row}

    def habit_level(self, j: int) -> dict[Context, tuple[float, dict[str, float]]]:
        """Level j of the habit: context (last j symbols) -> (n(h_j), {a: n(h_j, a)}), weighed."""
        out: dict[Context, tuple[float, dict[str, float]]] = {}
        for ctx, row in self._level(j, "habit").items():
            out[ctx] = (sum(row.values()), row)
        return out

    def reach_level(self, j: int) -> dict[Context, dict[str, float]]:
        """Level j of the reach: context -> {a: m(h_j, a)}, weighed; n(h_j) is the habit's."""
        return self._level(j, "reach")

    def _level(self, j: int, which: str) -> dict[Context, dict[str, float]]:
        if not 0 <= j <= self.order:
            raise ValueError(f"level {j} is outside 0..{self.order}")
        cut = self.order - j
        out: dict[Context, dict[str, float]] = {}
        for w in self.weights:  # summing weights in a fixed order keeps the floats reproducible
            marginal: _Table = {}
            for ctx, row in getattr(self._groups[w], which).items():
                key = ctx[cut:]
                target = marginal.get(key)
                if target is None:
                    marginal[key] = dict(row)
                else:
                    for a, n in row.items():
                        target[a] = target.get(a, 0) + n
            for key in sorted(marginal):
                target_f = out.setdefault(key, {})
                for a, n in sorted(marginal[key].items()):
                    target_f[a] = target_f.get(a, 0.0) + w * n
        return out

    # writing
    def to_model(self) -> CountsModel:
        groups = [CountsGroupModel(weight=w, sequences=self._groups[w].sequences,
                                   habit=_rows(self._groups[w].habit),
                                   reach=_rows(self._groups[w].reach)) for w in self.weights]
        return CountsModel(order=self.order, groups=groups)

    @classmethod
    def from_model(cls, model: CountsModel) -> "Counts":
        counts = cls(model.order)
        for g in model.groups:
            raw = counts._group(g.weight)
            if raw is None:
                continue
            part = _Raw()
            part.habit = _table(g.habit, model.order)
            part.reach = _table(g.reach, model.order)
            part.sequences = g.sequences
            raw.add_from(part)
        return counts

    def to_json(self) -> str:
        """The counts as one line of JSON; equal counts give identical bytes."""
        return self.to_model().model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> "Counts":
        return cls.from_model(CountsModel.model_validate_json(text))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Counts):
            return NotImplemented
        return self.to_model() == other.to_model()

    def __repr__(self) -> str:
        return (f"Counts(order={self.order}, weights={self.weights}, "
                f"sequences={self.sequences():g}, steps={self.steps():g})")


def vocabulary(counts: Counts, tools: Iterable[str] = ()) -> list[str]:
    """The actions a model predicts over: REPLY, the given tools and every action seen, sorted."""
    return sorted(set(tools) | counts.actions() | {REPLY})


# -- prediction ----------------------------------------------------------------------------------

class BackoffModel:
    """The habit and the reach for one α and vocabulary size; tables are cached per context.

    `history` is the session's step symbols so far (any sequence; only the last ORDER matter).
    Returned dicts are shared with the cache: read them, do not change them.
    """

    def __init__(self, counts: Counts, alpha: float, vocab_size: int,
                 actions: Iterable[str] = (), reach_alpha: float | None = None) -> None:
        """`actions` names actions beyond those seen that `habit` should list (e.g. every read);
        `reach_alpha` is the reach's own concentration (`learn/reach_alpha.py`; default α)."""
        if reach_alpha is None:
            reach_alpha = alpha
        if not alpha > 0.0 or not reach_alpha > 0.0:
            raise ValueError(f"α must be positive, not {alpha if not alpha > 0.0 else reach_alpha!r}")
        known = counts.actions() | set(actions)
        if vocab_size < max(len(known), 1):
            raise ValueError(f"vocab_size {vocab_size} is smaller than the {len(known)} actions "
                             "known; use counts.vocabulary(counts, tools)")
        self.order = counts.order
        self.alpha = float(alpha)
        self.reach_alpha = float(reach_alpha)
        self.vocab_size = int(vocab_size)
        self._actions = tuple(sorted(known))
        self._habit_levels = [counts.habit_level(j) for j in range(self.order + 1)]
        self._reach_levels = [counts.reach_level(j) for j in range(self.order + 1)]
        self._habit_cache: dict[Context, tuple[dict[str, float], float]] = {}
        self._reach_cache: dict[Context, tuple[dict[str, float], float]] = {}

    def context_of(self, history: Sequence[str]) -> Context:
        """The full-order context of a history: its last ORDER symbols, START-padded."""
        k = self.order
        if k == 0:
            return ()
        if len(history) >= k:
            return tuple(history[-k:])
        return (START,) * (k - len(history)) + tuple(history)

    # the habit
    def habit(self, history: Sequence[str]) -> dict[str, float]:
        """p(a | h) for every action seen in training or named at construction; `habit_of`
        gives any other action's."""
        return self._habit_entry(self.context_of(history))[0]

    def habit_of(self, history: Sequence[str], action: str) -> float:
        """p(action | h), for any action of the vocabulary."""
        table, unseen = self._habit_entry(self.context_of(history))
        return table.get(action, unseen)

    def _habit_entry(self, ctx: Context) -> tuple[dict[str, float], float]:
        entry = self._habit_cache.get(ctx)
        if entry is None:
            entry = self._walk(ctx, self._habit_counts, self.alpha)
            self._store(self._habit_cache, ctx, entry)
        return entry

    def _habit_counts(self, j: int, ctx: Context) -> tuple[float, dict[str, float]] | None:
        return self._habit_levels[j].get(ctx)

    # the reach
    def reach(self, history: Sequence[str], action: str) -> float:
        """r(action | h): the probability that the agent calls `action` before its next write."""
        table, unseen = self._reach_entry(self.context_of(history))
        return table.get(action, unseen)

    def reach_all(self, history: Sequence[str], actions: Iterable[str]) -> dict[str, float]:
        """r(a | h) for each of `actions`."""
        table, unseen = self._reach_entry(self.context_of(history))
        return {a: table.get(a, unseen) for a in actions}

    def _reach_entry(self, ctx: Context) -> tuple[dict[str, float], float]:
        entry = self._reach_cache.get(ctx)
        if entry is None:
            entry = self._walk(ctx, self._reach_counts, self.reach_alpha)
            self._store(self._reach_cache, ctx, entry)
        return entry

    def _reach_counts(self, j: int, ctx: Context) -> tuple[float, dict[str, float]] | None:
        seen = self._habit_levels[j].get(ctx)
        if seen is None:
            return None
        return seen[0], self._reach_levels[j].get(ctx, {})

    # shared
    def _walk(self, ctx: Context,
              counts_at: Callable[[int, Context], tuple[float, dict[str, float]] | None],
              alpha: float) -> tuple[dict[str, float], float]:
        """Back off from uniform through levels 0..ORDER; unseen contexts leave the value as is."""
        unseen = 1.0 / self.vocab_size
        table = dict.fromkeys(self._actions, unseen)
        for j in range(self.order + 1):
            found = counts_at(j, ctx[self.order - j:])
            if found is None:
                continue
            total, row = found
            denom = total + alpha
            table = {a: (row.get(a, 0.0) + alpha * p) / denom for a, p in table.items()}
            unseen = alpha * unseen / denom
        return table, unseen

    @staticmethod
    def _store(cache: dict, ctx: Context, entry: tuple[dict[str, float], float]) -> None:
        if len(cache) >= CACHE_LIMIT:
            cache.clear()
        cache[ctx] = entry
