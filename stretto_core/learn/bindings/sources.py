"""Evidence at every source, counted in bulk: the hot loop of learning bindings.

For every string or number value the agent passed to a read, `bindings_learn` counts, at every
source path of every pool of the state, the pick a binding would make there (`bindings_pick`):
n_has[class, source] += 1, and n_eq += 1 when the pick is the agent's value, under two rules
(free, and aligned to the call's other values). Most of those picks are the same for every value:
where the tool was passed none of a path's candidates for the argument, the free pick is the
path's fresh pick (`fresh_pick`), which changes only when the pool does or the user speaks.

So each tool's current pool keeps its sources (`Sources`, at one `user_version`, their fresh
picks read from the tool's table of them, `fresh.fresh_picks`) and, per
argument, a `Tally`: the values evaluated, and per source the values at which the fresh pick did
not apply (the tool was passed a candidate there, or an aligned pick took its place). Those picks
are counted one by one; the fresh picks' n_eq at once, through an index of the fresh picks by key;
and their n_has in bulk, n_has += values - skipped, when the sources are superseded or renamed
or the session ends (`flush_sources`).

Every count here is a whole number, so adding n at once is the same float as adding 1 n times:
the counts are exactly those of evaluating every pick one by one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stretto_core.learn.bindings.fresh import Fresh, FreshPicks, fresh_at, fresh_picks, may_be, same_pool, settled
from stretto_core.learn.bindings.mention import list_prefix
from stretto_core.learn.bindings.model import ALIGNED, FREE, ArgCounts, source_key
from stretto_core.learn.bindings.pick import Holders, Pick, eligible_path, free_pick_held, gather, pool_of, renamed
from stretto_core.learn.bindings.records import aligned_pick_held, anchored_element
from stretto_core.sessions.state import ResultEntry, ToolState

Evidence = dict[str, dict[str, list[float]]]
Elements = dict[tuple[int, str], "tuple[int, ...] | None"]


@dataclass(slots=True)
class Tally:
    """One argument's values evaluated at one `Sources`, and where the fresh pick did not apply."""

    counts: ArgCounts
    free: int = 0
    aligned: int = 0
    free_skips: dict[int, int] = field(default_factory=dict)
    """Source index -> values whose free pick there was counted one by one."""
    aligned_skips: dict[int, int] = field(default_factory=dict)
    """The same for the aligned rule."""


@dataclass(slots=True)
class Sources:
    """The source paths of one tool's pool at one `user_version`, with their fresh picks."""

    pool: list[ResultEntry]
    version: int
    paths: list[str]
    keys: list[str]
    """Each path's source key, `<tool> <path>`."""
    at: dict[str, int]
    """Path -> its index."""
    lists: dict[str, list[int]]
    """List prefix -> the indexes of the paths under it."""
    holders: list[Holders | None]
    """Each path's holders, once a pick there needed them (`_holders_at`)."""
    fresh: list[Fresh | None] = field(default_factory=list)
    by_fresh: dict[str, list[int]] = field(default_factory=dict)
    """Key of a fresh pick -> the indexes where it is the fresh pick."""
    tallies: dict[tuple[str, str], Tally] = field(default_factory=dict)
    table: FreshPicks | None = None
    """The tool's table `fresh` was read from, and its `dropped` then."""
    dropped: int = -1


def source_paths(pool: list[ResultEntry]) -> list[str]:
    """The source paths of any result of a pool, newest result first, each once."""
    if len(pool) == 1:
        return [p for p in pool[0].index.by_path if eligible_path(p)]
    seen: dict[str, None] = {}
    for entry in pool:
        for path in entry.index.by_path:
            if path not in seen and eligible_path(path):
                seen[path] = None
    return list(seen)


def count_value(state: ToolState, counts: ArgCounts, tool: str, arg: str, key: str,
                anchors: list[str]) -> None:
    """Count the evidence of one value (normalized `key`) of `arg` at every source (module docstring).

    `counts.evidence` must hold the FREE rule, and the ALIGNED one when there are `anchors`.
    """
    passed = state.passed_values(tool, arg)
    elements: Elements = {}
    for source_tool in state.ok_results:
        sources = _current(state, source_tool)
        tally = sources.tallies.get((tool, arg))
        if tally is None:
            tally = sources.tallies[(tool, arg)] = Tally(counts)
        own = _count_free(state, sources, tally, tool, arg, key, passed)
        if anchors:
            _count_aligned(state, sources, tally, tool, arg, key, passed, anchors, elements, own)


def flush_sources(state: ToolState) -> None:
    """Count every tally's fresh picks in bulk (at the end of a session)."""
    for sources in state.views.get("sources", {}).values():
        _flush(sources)


def _current(state: ToolState, tool: str) -> Sources:
    """The sources of the tool's current pool, named as of now (the superseded ones flushed), their
    fresh picks read from the tool's `fresh_picks`."""
    pool = pool_of(state, tool)
    by_tool = state.views.setdefault("sources", {})
    got = by_tool.get(tool)
    if got is not None and same_pool(got.pool, pool):
        if got.version != state.user_version:
            got.version = state.user_version
            table = fresh_picks(state, tool, pool)
            if got.table is not table or got.dropped != table.dropped:  # some picks may have moved
                fresh = _fresh_of(state, table, got.paths)
                got.table, got.dropped = table, table.dropped
                if fresh != got.fresh:
                    _flush(got)
                    _set_fresh(got, fresh)
        return got
    if got is not None:
        _flush(got)
    paths = source_paths(pool)
    lists: dict[str, list[int]] = {}
    for i, path in enumerate(paths):
        prefix = list_prefix(path)
        if prefix is not None:
            lists.setdefault(prefix, []).append(i)
    new = by_tool[tool] = Sources(pool, state.user_version, paths, [source_key(tool, p) for p in paths],
                                  {p: i for i, p in enumerate(paths)}, lists, [None] * len(paths))
    if got is not None and len(pool) > 1 and pool[1] is got.pool[0]:  # one newer result in front
        changed = [pool[0]] + ([got.pool[-1]] if len(pool) == len(got.pool) else [])
        for i, path in enumerate(paths):  # the same results hold the path: the same holders
            j = got.at.get(path)
            if j is not None and not any(path in entry.index.by_path for entry in changed):
                new.holders[i] = got.holders[j]
    table = fresh_picks(state, tool, pool)
    _set_fresh(new, _fresh_of(state, table, paths))
    new.table, new.dropped = table, table.dropped
    return new


def _fresh_of(state: ToolState, table: FreshPicks, paths: list[str]) -> list[Fresh | None]:
    """The fresh pick at each path, from the tool's table."""
    picks = table.picks
    return [made[0] if (made := picks.get(path)) is not None else fresh_at(state, table, path) for path in paths]


def _holders_at(state: ToolState, sources: Sources, i: int) -> Holders:
    """The holders of source `i`, current."""
    held = sources.holders[i]
    if held is None:
        held = sources.holders[i] = gather(sources.pool, sources.paths[i])
    return renamed(state, sources.paths[i], held)


def _set_fresh(sources: Sources, fresh: list[Fresh | None]) -> None:
    sources.fresh = fresh
    by_fresh: dict[str, list[int]] = {}
    for i, pick in enumerate(fresh):
        if pick is not None:
            for key in may_be(pick):
                by_fresh.setdefault(key, []).append(i)
    sources.by_fresh = by_fresh


def _count_free(state: ToolState, sources: Sources, tally: Tally, tool: str, arg: str, key: str,
                passed: set[str] | frozenset[str]) -> dict[int, Pick | None]:
    """The free rule; returns the picks counted one by one (where the fresh pick may not apply)."""
    tally.free += 1
    evidence = tally.counts.evidence[FREE]
    own: dict[int, Pick | None] = {}
    for i in _maybe_passed(sources, passed):
        tally.free_skips[i] = tally.free_skips.get(i, 0) + 1
        pick = own[i] = free_pick_held(state, tool, arg, sources.pool, sources.paths[i],
                                       _holders_at(state, sources, i), passed)
        if pick is not None:
            _bump(evidence, pick.mention, sources.keys[i], 1, pick.key == key)
    for i in sources.by_fresh.get(key, ()):
        if i not in own:
            _bump_fresh(state, sources, evidence, i, key)
    return own


def _count_aligned(state: ToolState, sources: Sources, tally: Tally, tool: str, arg: str, key: str,
                   passed: set[str] | frozenset[str], anchors: list[str], elements: Elements,
                   own: dict[int, Pick | None]) -> None:
    """The aligned rule: the aligned pick where there is one, else the free pick (as `own` has it,
    or the fresh pick)."""
    tally.aligned += 1
    evidence = tally.counts.evidence[ALIGNED]
    taken: dict[int, Pick | None] = {}
    for prefix, indexes in sources.lists.items():
        if not _anchored_somewhere(elements, sources.pool, prefix, anchors):
            continue  # no element of this list holds an anchor: every path under it falls back
        for i in indexes:
            pick = aligned_pick_held(state, tool, arg, sources.paths[i], _holders_at(state, sources, i), passed,
                                     anchors, elements)
            if pick is not None:
                taken[i] = pick
    for i, pick in own.items():
        taken.setdefault(i, pick)
    for i, pick in taken.items():
        tally.aligned_skips[i] = tally.aligned_skips.get(i, 0) + 1
        if pick is not None:
            _bump(evidence, pick.mention, sources.keys[i], 1, pick.key == key)
    for i in sources.by_fresh.get(key, ()):
        if i not in taken:
            _bump_fresh(state, sources, evidence, i, key)


def _bump_fresh(state: ToolState, sources: Sources, evidence: Evidence, i: int, key: str) -> None:
    """n_eq += 1 at source `i` when its fresh pick is `key` (it may be one of several, `Unsettled`)."""
    pick = sources.fresh[i]
    if settled(state, pick) == key:  # type: ignore[arg-type]
        _bump(evidence, pick[1], sources.keys[i], 0, True)  # type: ignore[index]


def _anchored_somewhere(elements: Elements, pool: list[ResultEntry], prefix: str, anchors: list[str]) -> bool:
    """Some result of the pool has an element of the list at `prefix` holding an anchor
    (`anchored_element`, kept in `elements` as `aligned_pick_held` keeps it)."""
    for entry in pool:
        tag = (entry.position, prefix)
        element = elements.get(tag, False)
        if element is False:
            element = elements[tag] = anchored_element(entry, prefix, anchors)
        if element is not None:
            return True
    return False


def _maybe_passed(sources: Sources, passed: set[str] | frozenset[str]) -> set[int]:
    """The indexes of paths where some result of the pool holds a value passed (a superset of where
    the fresh pick does not apply: `free_pick_held` decides)."""
    out: set[int] = set()
    for k in passed:
        for entry in sources.pool:
            for path in entry.index.paths.get(k, ()):
                i = sources.at.get(path)
                if i is not None:
                    out.add(i)
    return out


def _flush(sources: Sources) -> None:
    """Add the fresh picks' n_has of every tally, and start the tallies afresh."""
    for tally in sources.tallies.values():
        evidence = tally.counts.evidence
        for i, pick in enumerate(sources.fresh):
            if pick is None:
                continue
            n = tally.free - tally.free_skips.get(i, 0)
            if n:
                _bump(evidence[FREE], pick[1], sources.keys[i], n, False)
            if tally.aligned:
                n = tally.aligned - tally.aligned_skips.get(i, 0)
                if n:
                    _bump(evidence[ALIGNED], pick[1], sources.keys[i], n, False)
    sources.tallies = {}


def _bump(evidence: Evidence, cls: str, src: str, has: int, eq: bool) -> None:
    """n_has[cls, src] += has and n_eq += 1 when `eq` (creating the cell as counting one by one would)."""
    per_source = evidence.get(cls)
    if per_source is None:
        per_source = evidence[cls] = {}
    cell = per_source.get(src)
    if cell is None:
        cell = per_source[src] = [0.0, 0.0]
    if has:
        cell[0] += float(has)
    if eq:
        cell[1] += 1.0
