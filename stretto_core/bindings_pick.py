"""Picking a value at a source: the one rule that learning evaluates and serving applies.

A source is a tool and a path, `get_user_details $.orders[*]`. Its pool is the successful
results of that tool the agent saw (its own or a lookup's), newest first, at most `MAX_POOL`;
its candidates are the values at that path. A candidate is open when the tool was not yet
passed it for this argument (in the whole session).

Free pick (an argument on its own):

    pick = the open candidate the user named most clearly, in any result of the pool
           (`bindings_mention`), else the first open candidate of the newest result holding the
           path;  none when that result has no open candidate

The paper takes the newest result only. Namings reach back further because agents walk back:
in τ²-bench retail, 64 of 155 `get_product_details` calls took an item of an order read before
the newest one (the customer named the item; the agent read every order to find it).

Aligned pick (a further argument of the same call): when another argument's value sits in one
element of the source's list, the value at the source's path in that same element, open or not
(`get_flight_status(flight_number, date)` takes the date of the flight it took).

Mention class of a pick, in this order:

    mentioned       the user named the pick
    named_other     the user named another candidate of the pool at the path
    described_read  another candidate was already passed to the tool, and the result of that
                    call held a value the user gave (written, or typed by the agent before any
                    result held it; ≥ 4 characters with a digit) that the pick's result does not
    plain           otherwise

Paths that name data rather than structure (a key with whitespace or with ≥ `DATA_KEY_DIGITS`
digits, as in `$.variants.1008292230.price` or AgentDojo's `$.Le Marais.rating`) are not sources:
each would be one record's path, and there would be as many as records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from stretto_core.bindings_mention import (LIST_MARK, addresses, clearest, keys_at, list_prefix,
                                           mention_flags)
from stretto_core.bindings_model import DESCRIBED_READ, MENTIONED, NAMED_OTHER, PLAIN
from stretto_core.state import ResultEntry, ToolState, is_keyish
from stretto_core.values import normalize

DATA_KEY_DIGITS = 4
"""A path key with this many digits or more is a record's id, not a field name."""

MAX_POOL = 8
"""A source draws on at most this many of its tool's newest results."""

_SEGMENTS = re.compile(r"\[\*\]|\.")


@lru_cache(maxsize=65536)
def eligible_path(path: str) -> bool:
    """A path that names structure, so the same path recurs across results: usable as a source."""
    for seg in _SEGMENTS.split(path[1:]):
        if not seg or seg == "*~":
            continue
        if any(ch.isspace() for ch in seg) or sum(ch.isdigit() for ch in seg) >= DATA_KEY_DIGITS:
            return False
    return True


@dataclass
class Pick:
    """One pick at one source: the value, its result and place there, its mention class."""

    value: Any
    key: str
    index: int
    entry: ResultEntry
    mention: str


def pool_of(state: ToolState, tool: str) -> list[ResultEntry]:
    """The results a source of `tool` draws on: its successful visible results, newest first."""
    results = state.ok_results.get(tool)
    if not results:
        return []
    return results[:-MAX_POOL - 1:-1]


def free_pick(state: ToolState, tool: str, arg: str, pool: list[ResultEntry], path: str) -> Pick | None:
    """The free pick at (the pool's tool, `path`) for argument `arg` of `tool` (module docstring)."""
    passed = state.passed.get(tool) or ()
    open_: list[tuple[ResultEntry, list[int]]] = []
    fallback: tuple[ResultEntry, int] | None = None
    newest = True
    for entry in pool:
        keys = keys_at(entry, path)
        if not keys:
            continue
        indexes = [i for i, k in enumerate(keys) if k and (arg, k) not in passed]
        if indexes:
            open_.append((entry, indexes))
            if newest:
                fallback = (entry, indexes[0])
        newest = False
        if not state.user_version:
            break
    if not open_:
        return None
    named = clearest(state, pool, path, open_)
    if named is None:
        if fallback is None:
            return None  # the newest result holding the path has nothing left, and no naming
        named = fallback
    return _pick(state, tool, arg, pool, path, *named)


def _pick(state: ToolState, tool: str, arg: str, pool: list[ResultEntry], path: str,
          entry: ResultEntry, index: int) -> Pick:
    return Pick(entry.index.by_path[path][index], keys_at(entry, path)[index], index, entry,
                classify(state, tool, arg, pool, path, entry, index))


def classify(state: ToolState, tool: str, arg: str, pool: list[ResultEntry], path: str,
             entry: ResultEntry, index: int) -> str:
    """The mention class of the candidate at `index` of `path` in `entry` (module docstring)."""
    if not state.user_version and not state.given:
        return PLAIN
    if mention_flags(state, entry, path)[index]:
        return MENTIONED
    key = keys_at(entry, path)[index]
    passed = state.passed.get(tool) or ()
    others: list[str] = []
    for other in pool:
        keys = keys_at(other, path)
        if not keys:
            continue
        flags = mention_flags(state, other, path)
        for i, k in enumerate(keys):
            if k != key:
                if flags[i]:
                    return NAMED_OTHER
                if (arg, k) in passed:
                    others.append(k)
    for k in others:
        read = state.result_for.get((tool, arg, k))
        if read is not None and read.ok and _holds_given(state, read, entry):
            return DESCRIBED_READ
    return PLAIN


def _holds_given(state: ToolState, read: ResultEntry, listing: ResultEntry) -> bool:
    """The read result holds a value the user gave that the listing does not hold."""
    tag = ("g", listing.position)
    version = (state.user_version, len(state.given))
    cached = read.cache.get(tag)
    if cached is not None and cached[0] == version:
        return cached[1]
    keyish = read.cache.get("keyish")
    if keyish is None:
        keyish = read.cache["keyish"] = [k for k in read.index.first_path if is_keyish(k)]
    text = state.user_text()
    held = listing.index.first_path
    answer = any((k in state.given or k in text) and k not in held for k in keyish)
    read.cache[tag] = (version, answer)
    return answer


# ---------------------------------------------------------------- records

def aligned_pick(state: ToolState, tool: str, arg: str, pool: list[ResultEntry], path: str,
                 anchors: list[str]) -> Pick | None:
    """The value at `path` in the list element holding one of `anchors` (normalized values), in
    the newest result of the pool that has one.

    None when the path is in no list or no element holds an anchor: the caller falls back to
    `free_pick`. Learning anchors on the agent's own values of the call's other arguments.
    """
    prefix = list_prefix(path)
    if prefix is None or not anchors:
        return None
    depth = prefix.count(LIST_MARK)
    for entry in pool:
        if path not in entry.index.by_path:
            continue
        for anchor in anchors:
            element = _element_of(entry, prefix, depth, anchor)
            if element is not None:
                return value_in_element(state, tool, arg, pool, entry, path, prefix, element)
    return None


def _element_of(entry: ResultEntry, prefix: str, depth: int, key: str) -> tuple[int, ...] | None:
    """The address of the first element of the list at `prefix` holding `key` at any path."""
    table = entry.cache.get(("e", prefix))
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
        entry.cache[("e", prefix)] = table
    return table.get(key)


def element_of_pick(path: str, pick: Pick) -> tuple[str, tuple[int, ...]] | None:
    """The list and element a pick came from, for serving to align the call's other arguments to."""
    prefix = list_prefix(path)
    if prefix is None:
        return None
    found = addresses(pick.entry, path).get(pick.key)
    if not found:
        return None
    return prefix, found[0][:prefix.count(LIST_MARK)]


def value_in_element(state: ToolState, tool: str, arg: str, pool: list[ResultEntry], entry: ResultEntry,
                     path: str, prefix: str, element: tuple[int, ...]) -> Pick | None:
    """The value at `path` in one element of the list at `prefix`; None unless `path` lies under it."""
    if not path.startswith(prefix):
        return None
    depth = len(element)
    for address, value in entry.index.records.get(path, ()):
        if address[:depth] == element:
            key = normalize(value)
            if key is None:
                return None
            return _pick(state, tool, arg, pool, path, entry, keys_at(entry, path).index(key))
    return None


# ---------------------------------------------------------------- lists

def list_candidates(entry: ResultEntry, path: str) -> tuple[list[Any], frozenset[str]]:
    """Every value at `path` (a list pick) and their normalized set."""
    got = entry.cache.get(("l", path))
    if got is None:
        values = list(entry.index.by_path.get(path, ()))
        got = entry.cache[("l", path)] = (values, frozenset(k for k in keys_at(entry, path) if k))
    return got


def list_key(keys: frozenset[str]) -> tuple[str, ...]:
    """The form `ToolState.passed_lists` keeps a list in."""
    return tuple(sorted(keys))
