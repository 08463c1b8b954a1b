"""Records and lists at a source: aligned picks from one record, and list-valued arguments.

A further argument of a call is picked from the record the lead argument's value came from
(`get_flight_status(flight_number, date)` takes the date of the flight it took); a list argument
takes every value at a path (AgentDojo travel's hotel names). Built on the free pick of `pick`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from stretto_core.learn.bindings.mention import LIST_MARK, addresses, candidates, keys_at, list_prefix
from stretto_core.learn.bindings.pick import Holders, Pick, holders, pick_held
from stretto_core.sessions.state import ResultEntry, ToolState
from stretto_core.sessions.values import normalize


def aligned_pick(state: ToolState, tool: str, arg: str, pool: list[ResultEntry], path: str,
                 anchors: list[str]) -> Pick | None:
    """The value at `path` in the list element holding one of `anchors` (normalized values), in
    the newest result of the pool that has one.

    None when the path is in no list or no element holds an anchor: the caller falls back to
    `free_pick`. Learning anchors on the agent's own values of the call's other arguments.
    """
    return aligned_pick_held(state, tool, arg, path, holders(state, pool, path),
                             state.passed_values(tool, arg), anchors)


def aligned_pick_held(state: ToolState, tool: str, arg: str, path: str, held: Holders,
                      passed: set[str] | frozenset[str], anchors: list[str],
                      elements: dict[tuple[int, str], tuple[int, ...] | None] | None = None) -> Pick | None:
    """`aligned_pick` given `holders(state, pool, path)` and `state.passed_values(tool, arg)`.

    `elements` keeps, for one set of anchors, the element each (result position, list prefix)
    found, for the next path under the same list.
    """
    prefix = list_prefix(path)
    if prefix is None or not anchors:
        return None
    depth = _depth(prefix)
    for entry in held.entries:
        tag = (entry.position, prefix)
        if elements is not None and tag in elements:
            element = elements[tag]
        else:
            element = _anchored(entry, prefix, depth, anchors)
            if elements is not None:
                elements[tag] = element
        if element is not None:
            index = _element_index(entry, path, depth).get(element)
            if index is None:
                return None
            return pick_held(state, tool, arg, held, path, passed, entry, index)
    return None


def anchored_element(entry: ResultEntry, prefix: str, anchors: list[str]) -> tuple[int, ...] | None:
    """The element of the list at `prefix` holding the first anchor any element holds, or None."""
    return _anchored(entry, prefix, _depth(prefix), anchors)


def _anchored(entry: ResultEntry, prefix: str, depth: int, anchors: list[str]) -> tuple[int, ...] | None:
    for anchor in anchors:
        element = _element_of(entry, prefix, depth, anchor)
        if element is not None:
            return element
    return None


@lru_cache(maxsize=65536)
def _depth(prefix: str) -> int:
    return prefix.count(LIST_MARK)


def _element_of(entry: ResultEntry, prefix: str, depth: int, key: str) -> tuple[int, ...] | None:
    """The address of the first element of the list at `prefix` holding `key` at any path."""
    views = entry.index_views
    table = views.get(("e", prefix))
    if table is None:
        table = {}
        for path, pairs in entry.index.records.items():
            if path.startswith(prefix) and not path.endswith("*~"):
                for address, value in pairs:
                    k = normalize(value)
                    if k is not None:
                        best = table.get(k)
                        if best is None or address[:depth] < best:
                            table[k] = address[:depth]
        views[("e", prefix)] = table
    return table.get(key)


def element_of_pick(path: str, pick: Pick) -> tuple[str, tuple[int, ...]] | None:
    """The list and element a pick came from, for serving to align the call's other arguments to."""
    prefix = list_prefix(path)
    if prefix is None:
        return None
    found = addresses(pick.entry, path).get(pick.key)
    if not found:
        return None
    return prefix, found[0][:_depth(prefix)]


def value_in_element(state: ToolState, tool: str, arg: str, pool: list[ResultEntry], entry: ResultEntry,
                     path: str, prefix: str, element: tuple[int, ...]) -> Pick | None:
    """The value at `path` in one element of the list at `prefix`; None unless `path` lies under it."""
    if not path.startswith(prefix):
        return None
    index = _element_index(entry, path, len(element)).get(element)
    if index is None:
        return None
    return pick_held(state, tool, arg, holders(state, pool, path), path, state.passed_values(tool, arg),
                      entry, index)


def _element_index(entry: ResultEntry, path: str, depth: int) -> dict[tuple[int, ...], int | None]:
    """Element address (its first `depth` list indexes) -> the candidate index of the first value
    at `path` in that element (cached with its index)."""
    tag = ("x", path, depth)
    views = entry.index_views
    table = views.get(tag)
    if table is None:
        table = {}
        first = candidates(entry, path).first if path in entry.index.by_path else {}
        for address, value in entry.index.records.get(path, ()):
            element = address[:depth]
            if element not in table:
                key = normalize(value)
                table[element] = None if key is None else first[key]
        views[tag] = table
    return table


# -- lists ---------------------------------------------------------------------------------

def list_candidates(entry: ResultEntry, path: str) -> tuple[list[Any], frozenset[str]]:
    """Every value at `path` (a list pick) and their normalized set."""
    views = entry.index_views
    got = views.get(("l", path))
    if got is None:
        values = list(entry.index.by_path.get(path, ()))
        got = views[("l", path)] = (values, frozenset(k for k in keys_at(entry, path) if k))
    return got


def list_key(keys: frozenset[str]) -> tuple[str, ...]:
    """The form `ToolState.passed_lists` keeps a list in."""
    return tuple(sorted(keys))
