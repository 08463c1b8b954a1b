"""Evidence at every source, counted in bulk: the hot loop of learning bindings.

For every string or number value the agent passed to a read, `bindings_learn` counts, at every
source path of every pool of the state, the pick a binding would make there (`bindings_pick`):
n_has[class, source] += 1, and n_eq += 1 when the pick is the agent's value, under two rules
(free, and aligned to the call's other values). Most of those picks are the same for every value:
where the tool was passed none of a path's candidates for the argument, the free pick is the
path's fresh pick (`fresh_pick`), which changes only when the pool does or the user speaks.

So each tool's current pool keeps its sources (`Sources`, at one `user_version`) and, per
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
from typing import Sequence

from stretto_core.learn.bindings.mention import (LIST_MARK, Named, candidates, clearest, keys_at, list_prefix,
                                                 named_view, written)
from stretto_core.learn.bindings.named_paths import named_table, view_of
from stretto_core.learn.bindings.model import ALIGNED, FREE, MENTIONED, PLAIN, ArgCounts, source_key
from stretto_core.learn.bindings.pick import (Holders, Pick, eligible_path, fresh_pick, free_pick_held, gather,
                                             pool_of, renamed)
from stretto_core.learn.bindings.records import aligned_pick_held, anchored_element
from stretto_core.sessions.state import ResultEntry, ToolState
from stretto_core.sessions.value_written import written_in
from stretto_core.sessions.values import ValueIndex

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


Fresh = tuple[str, str]
"""A fresh pick as counting needs it: its key and its mention class."""


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
    named: list[bool]
    """Each path's fresh pick weighed namings (it may change with the pool's other results)."""
    fresh: list[Fresh | None] = field(default_factory=list)
    by_fresh: dict[str, list[int]] = field(default_factory=dict)
    """Key of a fresh pick -> the indexes where it is the fresh pick."""
    tallies: dict[tuple[str, str], Tally] = field(default_factory=dict)


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


def list_source_picks(state: ToolState, tool: str) -> list[tuple[str, str, str, str]]:
    """(source key, path, fresh pick's key, its mention class) at each list path of the tool's current
    pool with a candidate (`bindings_named`), the fresh picks as `_current` makes them (`_fresh`).

    Called at every result of the agent's own, for every pool, so kept (`ListPicks`) and carried
    on: the evidence's picks where its sources are current; when the pool grows by a result, only
    the paths the results in and out can move are picked again (`_list_kept`); when the user
    speaks, only those the new words can move (`_moved_lists`)."""
    pool = pool_of(state, tool)
    if not pool:
        return []
    tag = ("list-picks", tool)
    got: ListPicks | None = state.views.get(tag)
    same_pool = got is not None and _same_pool(got.sources.pool, pool)
    if same_pool and got.sources.version == state.user_version:  # type: ignore[union-attr]
        return got.out  # type: ignore[union-attr]
    evidence = state.views.get("sources", {}).get(tool)
    if evidence is not None and evidence.version == state.user_version and _same_pool(evidence.pool, pool):
        listed = state.views[tag] = _lists_of(tool, evidence, state.user.count)  # the evidence's picks
        return listed.out
    if got is not None:
        old = got.sources
        if same_pool:
            _list_renamed(state, got)
            return got.out
        if len(pool) > 1 and pool[1] is old.pool[0]:  # one newer result in front
            if old.version != state.user_version:
                _list_renamed(state, got)
        else:
            got = None
    new = _list_sources(tool, pool, state.user_version)
    maybe = _maybe_named(state, pool)
    if got is None:
        new.fresh = [_fresh_unless(state, new, i, maybe) for i in range(len(new.paths))]
    else:
        new.fresh = _list_kept(state, got.sources, new, maybe)
    listed = state.views[tag] = ListPicks(new, state.user.count, _listed(new))
    return listed.out


def _same_pool(held: list[ResultEntry], pool: list[ResultEntry]) -> bool:
    """Whether `held` is the tool's current `pool` still (a pool only ever slides on)."""
    return held[0] is pool[0] and len(held) == len(pool)


@dataclass(slots=True)
class ListPicks:
    """The list paths of one tool's pool with their fresh picks, as `list_source_picks` gives them."""

    sources: Sources
    """Only the list paths; its `tallies` unused."""
    said: int
    """The user's messages as of `sources.version`."""
    out: list[tuple[str, str, str, str]]


def _list_sources(tool: str, pool: list[ResultEntry], version: int) -> Sources:
    paths = [p for p in source_paths(pool) if list_prefix(p) is not None]
    return Sources(pool, version, paths, [source_key(tool, p) for p in paths], {p: i for i, p in enumerate(paths)},
                   {}, [None] * len(paths), [False] * len(paths))


def _lists_of(tool: str, sources: Sources, said: int) -> ListPicks:
    """The list paths of `sources` (as `_current` keeps them), with their picks."""
    at = [i for i, path in enumerate(sources.paths) if list_prefix(path) is not None]
    own = Sources(sources.pool, sources.version, [sources.paths[i] for i in at], [sources.keys[i] for i in at],
                  {sources.paths[i]: j for j, i in enumerate(at)}, {}, [sources.holders[i] for i in at],
                  [sources.named[i] for i in at], [sources.fresh[i] for i in at])
    return ListPicks(own, said, _listed(own))


def _listed(sources: Sources) -> list[tuple[str, str, str, str]]:
    return [(sources.keys[i], sources.paths[i], pick[0], pick[1]) for i, pick in enumerate(sources.fresh)
            if pick is not None]


def _list_kept(state: ToolState, old: Sources, new: Sources, maybe: set[str] | None) -> list[Fresh | None]:
    """The fresh picks of `new`, whose pool is `old`'s with one newer result in front (and the
    oldest out, when full): `old`'s own where the results in and out hold neither the path nor,
    when the user named a candidate there, any path of its list (how clearly a record word names
    weighs its frequency over the pool's lists, `clearest`)."""
    changed = [new.pool[0]] + ([old.pool[-1]] if len(new.pool) == len(old.pool) else [])
    lists = {prefix for entry in changed for path in entry.index.by_path for prefix in _lists_of_path(path)}
    out: list[Fresh | None] = []
    for i, path in enumerate(new.paths):
        j = old.at.get(path)
        if (j is None or list_prefix(path) in lists and (old.named[j]
                                                         or any(path in e.index.by_path for e in changed))):
            out.append(_fresh_unless(state, new, i, maybe))
        else:
            new.holders[i], new.named[i] = old.holders[j], old.named[j]
            out.append(old.fresh[j])
    return out


def _list_renamed(state: ToolState, listed: ListPicks) -> None:
    """Bring the picks of `listed` to the state's `user_version`, its pool unchanged."""
    sources, user = listed.sources, state.user
    moved = _moved_lists(state, sources.pool, user.since(listed.said)) if not user.dropped else None
    sources.version, listed.said = state.user_version, user.count
    if moved is not None and not moved:
        return
    maybe = _maybe_named(state, sources.pool)
    for i, path in enumerate(sources.paths):
        if moved is None or list_prefix(path) in moved:
            sources.fresh[i] = _fresh_unless(state, sources, i, maybe)
    listed.out = _listed(sources)


def _moved_lists(state: ToolState, pool: list[ResultEntry], messages: list[str]) -> set[str] | None:
    """The lists (prefixes) of the pool's results whose paths' fresh picks `messages`, the user's
    newest, may have moved; None when it cannot be told.

    A pick weighs only namings, and a naming only values the user wrote (`written`): where they
    wrote it and how clearly. New words can move those only for values they hold, and a value
    names its own candidate or its record, an element of a list it lies under (as
    `named_paths.named_table` finds them)."""
    joined = "\n".join(messages)
    out: set[str] = set()
    for entry in pool:
        if type(entry.index) is not ValueIndex:
            return None
        paths = entry.index.paths
        for key in written(state, entry):
            if written_in(joined, key):
                for path in paths.get(key, ()):
                    out.update(_lists_of_path(path))
    return out


def _current(state: ToolState, tool: str) -> Sources:
    """The sources of the tool's current pool, named as of now (the superseded ones flushed)."""
    pool = pool_of(state, tool)
    by_tool = state.views.setdefault("sources", {})
    got = by_tool.get(tool)
    if got is not None and _same_pool(got.pool, pool):
        if got.version != state.user_version:
            got.version = state.user_version
            maybe = _maybe_named(state, got.pool)
            fresh = [_fresh_unless(state, got, i, maybe) for i in range(len(got.paths))]
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
                                  {p: i for i, p in enumerate(paths)}, lists, [None] * len(paths),
                                  [False] * len(paths))
    grew = got is not None and got.version == state.user_version and len(pool) > 1 and pool[1] is got.pool[0]
    maybe = _maybe_named(state, pool)
    _set_fresh(new, [_kept(state, got, new, i, maybe) if grew else _fresh_unless(state, new, i, maybe)
                     for i in range(len(paths))])
    return new


def _kept(state: ToolState, old: Sources, new: Sources, i: int, maybe: set[str] | None) -> Fresh | None:
    """The fresh pick at source `i` of `new`, whose pool is `old`'s with one newer result in front
    (and the oldest out, when full): `old`'s own where that changes no holder and no naming."""
    path = new.paths[i]
    j = old.at.get(path)
    dropped = old.pool[-1] if len(new.pool) == len(old.pool) else None
    if (j is None or old.named[j] or path in new.pool[0].index.by_path
            or (dropped is not None and path in dropped.index.by_path)):
        return _fresh_unless(state, new, i, maybe)
    new.holders[i] = old.holders[j]
    return old.fresh[j]


def _fresh(state: ToolState, sources: Sources, i: int) -> Fresh | None:
    """The fresh pick at source `i`, as `fresh_pick` makes it, straight from the pool's results.

    Nothing named there: the first candidate of the newest result holding the path, plain. Else
    the candidate the user named most clearly (`clearest`, every candidate being open), mentioned.
    """
    path = sources.paths[i]
    pool = sources.pool
    newest = None
    open_: list[tuple[ResultEntry, Sequence[int]]] = []
    views: list[Named | None] = []
    named: set[str] = set()
    for entry in pool:
        if path in entry.index.by_path:
            if newest is None:
                newest = entry
            table = named_table(state, entry)
            if table is None:
                view = named_view(state, entry, path)
                keys = view.keys if view is not None else None
            else:
                keys = table.get(path)
                view = None
            if keys is not None:
                open_.append((entry, candidates(entry, path).keyed))
                views.append(view if table is None else view_of(entry, path, keys))
                named.update(keys)
    sources.named[i] = bool(open_)
    if not open_:
        cands = candidates(newest, path)
        return (cands.keys[cands.keyed[0]], PLAIN) if cands.keyed else None
    named.discard("")
    if len(named) == 1:  # however clearly each was named, the pick is this value
        return named.pop(), MENTIONED
    found = clearest(state, pool, path, open_, views)
    if found is None:  # only candidates without a key were named: the general rule decides
        pick = fresh_pick(state, pool, path, _holders_at(state, sources, i))
        return None if pick is None else (pick.key, pick.mention)
    return keys_at(found[0], path)[found[1]], MENTIONED


def _fresh_unless(state: ToolState, sources: Sources, i: int, maybe: set[str] | None) -> Fresh | None:
    """`_fresh`, or straight the newest holder's first candidate, plain, when the path is not
    among the paths the user `maybe` named a candidate at (None: any may be)."""
    path = sources.paths[i]
    if maybe is None or path in maybe:
        return _fresh(state, sources, i)
    sources.named[i] = False
    for entry in sources.pool:
        if path in entry.index.by_path:
            cands = candidates(entry, path)
            return (cands.keys[cands.keyed[0]], PLAIN) if cands.keyed else None
    return None


def _maybe_named(state: ToolState, pool: list[ResultEntry]) -> set[str] | None:
    """Every path at which the user named a candidate of some result of the pool (where
    `named_view` is not None: `named_table`), or None when it cannot be told."""
    out: set[str] = set()
    for entry in pool:
        table = named_table(state, entry)
        if table is None:
            return None
        out.update(table)
    return out


def _lists_of_path(path: str) -> list[str]:
    """The prefix of a path up to and including each of its `[*]`: every list it lies under."""
    out, at = [], path.find(LIST_MARK)
    while at >= 0:
        out.append(path[:at + len(LIST_MARK)])
        at = path.find(LIST_MARK, at + 1)
    return out


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
            by_fresh.setdefault(pick[0], []).append(i)
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
            _bump(evidence, sources.fresh[i][1], sources.keys[i], 0, True)
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
            _bump(evidence, sources.fresh[i][1], sources.keys[i], 0, True)


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
