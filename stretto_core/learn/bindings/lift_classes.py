"""The mention class of every list path's fresh pick, as the class lift counts it: read from the pool's named tables.

The class lift (`named.count_decision`) asks, at every result of the agent's own, for every pool
and every list path of it, the class of the path's fresh pick (`pick.fresh_pick`), and, where it
is named and a read was passed a named value, its key. The binding evidence asks the same picks
(`fresh.fresh_picks` keeps them, carried on from one state to the next) but only where a read
with a value comes next: 264 of the 884 states the lift visits on τ² retail's train split. Made
through those tables at every state, the lift cost as much again as bringing every pool's named
tables up to date (`benchmarks/lift_ceiling.py`: `full` against `naming`). The class alone is
read straight from the named tables (`named_paths.named_table`) of the pool's results:

    plain       no result of the pool names a candidate at the path: the fresh pick is the
                newest holder's first candidate, and every list path of a whole index has
                one (an index keeps no value without a key); its key is not read (None)
    mentioned   some do: the one key named there, or of several (`SeveralNamed`) the one the
                user named most clearly, found only when a read was passed one of them
                (`fresh.clearest_key`, as `fresh.Unsettled`)

as `fresh._fresh` makes the pick: a named table holds only keys, never the empty key of a value
without one, so its general rule is never reached. A pool with a result that has no table (a
served state's, an index of another kind) makes every pick by `fresh_pick` itself. A test holds
the classes and the keys asked equal to picks made anew, on real sessions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from stretto_core.learn.bindings.fresh import clearest_key, same_pool
from stretto_core.learn.bindings.mention import LIST_MARK
from stretto_core.learn.bindings.model import MENTIONED, PLAIN, source_key
from stretto_core.learn.bindings.named_paths import NamedTable, named_table
from stretto_core.learn.bindings.pick import eligible_path, fresh_pick, holders, pool_of
from stretto_core.sessions.state import ResultEntry, ToolState


@dataclass(slots=True, eq=False)
class SeveralNamed:
    """The key of a mentioned pick among several candidates named at its path, found (`settle`)
    only when asked: as `fresh.Unsettled`, from the pool and named tables it was read from
    (they stand while the list holding it does: the same pool and user's words)."""

    path: str
    named: frozenset[str]
    """The keys named at the path: the pick is one of them."""
    pool: list[ResultEntry]
    tables: list[tuple[ResultEntry, NamedTable | None]]
    key: str | None = None

    def settle(self, state: ToolState) -> str:
        if self.key is None:
            self.key = clearest_key(state, self.pool, self.tables, self.path)
        return self.key


Pick = Union[str, SeveralNamed, None]
ListClass = tuple[str, str, Pick, str]
"""(source key, path, the pick's key, its mention class), as `count_decision` reads them."""


@dataclass(slots=True)
class PoolClasses:
    """One tool's pool, its list paths, and their classes as of one `user_version`."""

    pool: list[ResultEntry]
    version: int
    paths: list[str]
    keys: list[str]
    """Each path's source key, `<tool> <path>`."""
    out: list[ListClass]


def list_classes(state: ToolState, tool: str) -> list[ListClass]:
    """(source key, path, pick, class) at each list path of the tool's current pool with a
    candidate, in `list_paths` order (module docstring): the same list object while the pool
    and the user's words stand, or while the classes made again are the same."""
    pool = pool_of(state, tool)
    if not pool:
        return []
    tag = ("list-classes", tool)
    got: PoolClasses | None = state.views.get(tag)
    version = state.user_version
    if got is not None and same_pool(got.pool, pool):
        if got.version == version:
            return got.out
    else:
        paths = list_paths(pool)
        got = state.views[tag] = PoolClasses(pool, -1, paths, [source_key(tool, p) for p in paths], [])
    got.version = version
    if got.paths:
        out = _classes(state, pool, got.paths, got.keys)
        if out != got.out:
            got.out = out
    return got.out


def _classes(state: ToolState, pool: list[ResultEntry], paths: list[str], keys: list[str]) -> list[ListClass]:
    tables = [named_table(state, entry) for entry in pool]
    if None in tables:
        return _made_anew(state, pool, paths, keys)
    named = [table for table in tables if table]
    if not named:  # the user named nothing in the pool
        return [(key, path, None, PLAIN) for key, path in zip(keys, paths)]
    out: list[ListClass] = []
    for key, path in zip(keys, paths):
        found: frozenset[str] | None = None
        for table in named:
            here = table.get(path)
            if here is not None:
                found = here if found is None else found | here
        if found is None:
            out.append((key, path, None, PLAIN))
        elif len(found) == 1:
            out.append((key, path, next(iter(found)), MENTIONED))
        else:
            out.append((key, path, SeveralNamed(path, found, pool, list(zip(pool, tables))), MENTIONED))
    return out


def _made_anew(state: ToolState, pool: list[ResultEntry], paths: list[str], keys: list[str]) -> list[ListClass]:
    """Every path's pick made by `fresh_pick` (a pool some result of which has no named table)."""
    out: list[ListClass] = []
    for key, path in zip(keys, paths):
        pick = fresh_pick(state, pool, path, holders(state, pool, path))
        if pick is not None:
            out.append((key, path, pick.key, pick.mention))
    return out


def list_paths(pool: list[ResultEntry]) -> list[str]:
    """The source paths under a list of any result of a pool, newest result first, each once."""
    if len(pool) == 1:
        return list(_list_paths_of(pool[0]))
    return list(dict.fromkeys(path for entry in pool for path in _list_paths_of(entry)))


def _list_paths_of(entry: ResultEntry) -> tuple[str, ...]:
    """The result's source paths under a list, in the index's order (kept with the index)."""
    views = entry.index_views
    got = views.get("list-paths")
    if got is None:
        got = views["list-paths"] = tuple(p for p in entry.index.by_path  # under a list: `list_prefix` is not None
                                          if LIST_MARK in p and eligible_path(p))
    return got
