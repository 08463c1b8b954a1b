"""Whether the user named a record of a list: how it moves the chance a lookup is made at all.

ρ is the chance a pick is the agent's value given that the agent calls the tool; the reach
r(t | h) the chance it calls the tool, counted over the tool state. Whether the user had named a
record of the list the pick comes from moves the second, which the reach cannot see: in τ²
retail, after an order, the agents read a product when the customer named an item (to exchange
or change it) and seldom when the customer named none, where the reach sees one rate. Over
5-fold cross-validation on the train tasks the lookups of an order's product scored 0.34 where
nothing was named and were used 10% of the time, and scored 0.37 where the user named the item
and were used 50% of the time.

Counted (`count_decision`; `lift_decisions` counts it at fewer decisions, weighted, where
`stretto learn --class-lift` asks), at every result of the agent's own calls, per list source (a path
with `[*]`) whose pool had a candidate: decisions n(s), and n_named(s) of those at which the
user had named a candidate there (its fresh pick is `mentioned`, `bindings_pick`); per read tool
t the agent called before its next write, k(t, s) and k_named(t, s). Where t was already passed
the named pick (the agent read that record), the decision is named for t only when t's own open
pick there is named too (`named_passed`, `passed_named`): a served pick is always open. Where
it is not, and the user had named the read record by id (`by_id`: they wrote the value, and it
is key-like), the decision is `other` for t (n_other(t, s), k_other(t, s)): the customer said
which order they meant, the agent read it, and reads another seldom (τ² retail's train split: 2
of 114 such decisions before an order read, 79 of 336 where nothing was named; airline's
reservations 32 of 272 against 322 of 1,128). Named by a word, it is not: the user's words say
less (AgentDojo slack: a channel "named" by a URL ending `/random`, the agent told to read all
channels). Derived (`class_lifts`), per bucket b (named, other, unnamed: the rest), the rate at
which t was called shrunk to the source's rate p = k / n with a prior of `PRIOR_DECISIONS`
decisions, over that rate:

    lift_b(t, s) = ((k_b + A p) / (n_b + A)) / p.

Only lifts below 1 are kept: the lift holds a pick back, never raises it. Raised too, the named
product lookups of τ² retail outrank reads the tool state is surer of and clear θ more often
than they are used: in 5-fold cross-validation over retail's train tasks 161 saved turns for 81
detours both ways against 157 for 63 held back only (the speculator before: 159 for 81), on the
shared test split 209 for 71 against 201 for 48 (before: 202 for 70).

Served (`bindings_bind`), the lead argument's ρ is multiplied by the lift of its pick's source
and bucket (`mentioned`: named; `named_other` beside a candidate named by id: other,
`identified_elsewhere`; any other: unnamed; `bucket_of`, `served_lift`). Variants that pool ρ
over the classes (`no_classes`, `simple`) do without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from stretto_core.learn.bindings.lift_classes import ListClass, list_classes
from stretto_core.learn.bindings.model import MENTIONED, NAMED_OTHER, PLAIN, NamedCounts
from stretto_core.learn.bindings.pick import free_pick, fresh_pick, holders, pool_of
from stretto_core.sessions.focus import is_keyish
from stretto_core.sessions.state import ResultEntry, ToolState

PRIOR_DECISIONS = 40.0
"""The source's rate weighs this many decisions in a bucket's shrunk rate (the paper's prior for
recalibrating a site's score on the agents' own lookups, Appendix B)."""

MIN_LIFT_CHANGE = 0.01
"""A bucket's lift is kept when it lowers the rate by at least this much."""

NAMED, OTHER, UNNAMED = "named", "other", "unnamed"
"""The buckets: the user had named a candidate of the source and the pick is one; had named one
and the tool was passed it already (the pick is another); or neither."""


def bucket_of(mention: str) -> str:
    """The bucket a pick of this class is served with: a served pick is open, so `mentioned` is
    named and open; `named_other` is a pick beside named candidates the tool was passed already
    (the free pick takes a named one while one is open); `plain` and `described_read` are the rest."""
    if mention == MENTIONED:
        return NAMED
    return OTHER if mention == NAMED_OTHER else UNNAMED


def by_id(state: ToolState, key: str) -> bool:
    """The user named this candidate by writing it, and it looks like an id (`is_keyish`: four
    characters or more, a digit): a record identified, not one a word of theirs happens to hold."""
    return is_keyish(key) and state.mentioned_key(key)


def identified_elsewhere(state: ToolState, pool: list[ResultEntry], path: str) -> bool:
    """The pool's named candidate at `path` (its fresh pick) was named by id (`by_id`): a
    `named_other` pick there is served with the `other` bucket's lift."""
    fresh = fresh_pick(state, pool, path, holders(state, pool, path))
    return fresh is not None and fresh.mention == MENTIONED and by_id(state, fresh.key)


def served_lift(lifts: dict[str, float], mention: str, identified: bool, version: int) -> float:
    """The lift a pick of this class is served with, from its source's lifts in a table of this
    version: a `named_other` pick beside a record the user `identified` takes the `other` lift
    (from version 3), any other pick but a `mentioned` one the `unnamed` lift."""
    bucket = bucket_of(mention)
    if bucket == OTHER and (version < 3 or not identified):
        bucket = UNNAMED
    return lifts.get(bucket, 1.0)


def count_decision(counts: NamedCounts, state: ToolState, called: Iterable[str], weight: float = 1.0) -> None:
    """Add one decision: each list source with a candidate, its fresh pick named or not, and the
    reads called after it; for a read already passed the named fresh pick, whether its own open
    pick there is named (module docstring).

    The decisions at which a source tool's list picks stand (one `list_classes` answer) are
    added in bulk (`_Run`) when the picks change or the session ends (`flush_named`); only where
    a read was passed a named pick is each decision counted as it comes. Every count is a whole
    number (times `weight`, a whole number too: `lift_decisions`), so the sums are the same
    floats as adding `weight` at each decision."""
    called = tuple(called)
    runs: dict[str, _Run] | None = state.views.get(_RUNS)
    if runs is None:
        runs = state.views[_RUNS] = {}
    passed: dict[str, dict[str, str]] | None = None
    for source_tool in state.ok_results:
        picks = list_classes(state, source_tool)
        if not picks:
            continue
        run = runs.get(source_tool)
        if run is None or run.picks is not picks:
            if run is not None:
                _add_run(counts, run)
            run = runs[source_tool] = _Run(counts, picks)
        run.decisions += weight
        for tool in called:
            run.called[tool] = run.called.get(tool, 0) + weight
        if not state.passed_by_arg:
            continue
        for i, (key, path, pick, mention) in enumerate(picks):
            if mention == PLAIN:
                continue
            if passed is None:
                passed = _passed_by_value(state)
            if type(pick) is not str:  # one of several named (`SeveralNamed`): settled if passed
                if passed.keys().isdisjoint(pick.named):  # type: ignore[union-attr]
                    continue
                pick = pick.settle(state)  # type: ignore[union-attr]
            hit = passed.get(pick)
            if hit is None:
                continue
            identified = None
            for tool, arg in hit.items():
                _add(counts.named_passed.setdefault(tool, {}), key, weight)
                if _own_named(state, tool, arg, source_tool, path):
                    _add(counts.passed_named.setdefault(tool, {}), key, weight)
                    continue
                if tool in called:  # not named for this read at this decision
                    run.unnamed[(tool, i)] = run.unnamed.get((tool, i), 0) + weight
                if identified is None:
                    identified = by_id(state, pick)
                if identified and counts.other is not None and counts.called_other is not None:
                    _add(counts.other.setdefault(tool, {}), key, weight)
                    if tool in called:
                        _add(counts.called_other.setdefault(tool, {}), key, weight)


def _own_named(state: ToolState, tool: str, arg: str, source_tool: str, path: str) -> bool:
    """Whether the free pick of `arg` of `tool` at (`source_tool`, `path`) is `mentioned`: it
    moves only with the pool, the user's words and the values passed for the argument (which
    only grow), so it is kept until one of them does."""
    pool = pool_of(state, source_tool)
    stamp = (pool[0].position, len(pool), state.user_version, len(state.passed_values(tool, arg)))
    memo: dict[tuple[str, str, str, str], tuple[tuple[int, int, int, int], bool]] | None = state.views.get(_OWN)
    if memo is None:
        memo = state.views[_OWN] = {}
    tag = (tool, arg, source_tool, path)
    got = memo.get(tag)
    if got is None or got[0] != stamp:
        own = free_pick(state, tool, arg, pool, path)
        got = memo[tag] = (stamp, own is not None and own.mention == MENTIONED)
    return got[1]


_OWN = "named-own"


def flush_named(state: ToolState) -> None:
    """Add the decisions not yet added (at the end of a session)."""
    for run in state.views.pop(_RUNS, {}).values():
        _add_run(run.counts, run)


_RUNS = "named-runs"


@dataclass(slots=True)
class _Run:
    """The decisions at which one source tool's list picks stood, not yet added to `counts`."""

    counts: NamedCounts
    picks: list[ListClass]
    decisions: float = 0
    called: dict[str, float] = field(default_factory=dict)
    """Read -> the decisions it was called after."""
    unnamed: dict[tuple[str, int], float] = field(default_factory=dict)
    """(read, index of a named pick) -> the decisions, of those it was called after, at which
    it had been passed the pick and its own open pick there was not named."""


def _add_run(counts: NamedCounts, run: _Run) -> None:
    n = float(run.decisions)
    decisions, named_rows = counts.decisions, counts.named
    # each called read's rows taken once a run, not once a pick (the adds are `_add`'s, in its order)
    called = [(tool, float(k), k, counts.called.setdefault(tool, {})) for tool, k in run.called.items()]
    unnamed = run.unnamed
    for i, (key, _, _, mention) in enumerate(run.picks):
        decisions[key] = decisions.get(key, 0.0) + n
        if mention == PLAIN:
            for _, k, _, row in called:
                row[key] = row.get(key, 0.0) + k
            continue
        named_rows[key] = named_rows.get(key, 0.0) + n
        for tool, k, whole, row in called:
            row[key] = row.get(key, 0.0) + k
            named = whole - unnamed.get((tool, i), 0) if unnamed else whole
            if named:
                _add(counts.called_named.setdefault(tool, {}), key, float(named))


def _passed_by_value(state: ToolState) -> dict[str, dict[str, str]]:
    """Value -> each tool passed it -> the first of its arguments passed it."""
    out: dict[str, dict[str, str]] = {}
    for (tool, arg), keys in state.passed_by_arg.items():
        for key in keys:
            by_tool = out.get(key)
            if by_tool is None:
                out[key] = {tool: arg}
            elif tool not in by_tool:
                by_tool[tool] = arg
    return out


def _add(row: dict[str, float], key: str, n: float) -> None:
    row[key] = row.get(key, 0.0) + n


def class_lifts(counts: NamedCounts, tool: str, sources: Iterable[str]) -> dict[str, dict[str, float]]:
    """Source -> bucket -> lift, for the sources of one lookup's orders (module docstring); counts
    of version 2 (no `called_other`) derive the two buckets they were derived with."""
    out: dict[str, dict[str, float]] = {}
    called = counts.called.get(tool, {})
    called_named = counts.called_named.get(tool, {})
    called_other = None if counts.called_other is None else counts.called_other.get(tool, {})
    other = None if counts.other is None else counts.other.get(tool, {})
    for src in sorted(set(sources)):
        n, k = counts.decisions.get(src, 0.0), called.get(src, 0.0)
        if n <= 0 or k <= 0:
            continue
        rate = k / n
        n1 = (counts.named.get(src, 0.0) - counts.named_passed.get(tool, {}).get(src, 0.0)
              + counts.passed_named.get(tool, {}).get(src, 0.0))
        k1 = called_named.get(src, 0.0)
        buckets = [(NAMED, (k1, n1))]
        if called_other is None or other is None:
            buckets.append((UNNAMED, (k - k1, n - n1)))
        else:
            n2, k2 = other.get(src, 0.0), called_other.get(src, 0.0)
            buckets += [(OTHER, (k2, n2)), (UNNAMED, (k - k1 - k2, n - n1 - n2))]
        lifts = {}
        for bucket, (kb, nb) in buckets:
            lift = ((kb + PRIOR_DECISIONS * rate) / (nb + PRIOR_DECISIONS)) / rate
            if lift <= 1.0 - MIN_LIFT_CHANGE:  # only ever held back (module docstring)
                lifts[bucket] = lift
        if lifts:
            out[src] = lifts
    return out
