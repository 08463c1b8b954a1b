"""Picking a value at a source: the one rule that learning evaluates and serving applies.

A source is a tool and a path, `get_user_details $.orders[*]`. Its pool is the successful
results of that tool the agent saw (its own or a lookup's), newest first, at most `ToolState.look_back`;
its candidates are the values at that path. A candidate is open when the tool was not yet
passed it for this argument (in the whole session).

Free pick (an argument on its own):

    pick = the open candidate the user named most clearly, in any result of the pool
           (`bindings_mention`), else the first open candidate of the newest result holding the
           path;  none when that result has no open candidate

The paper takes the newest result only. Namings reach back further because agents walk back:
in τ²-bench retail, 64 of 155 `get_product_details` calls took an item of an order read before
the newest one (the customer named the item; the agent read every order to find it).

Aligned pick (a further argument of the same call, in `records`): when another argument's value
sits in one element of the source's list, the value at the source's path in that same element,
open or not (`get_flight_status(flight_number, date)` takes the date of the flight it took).

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

Speed: what a pick at a path reads of its pool (the results holding the path, their candidates
and namings) is gathered once into `Holders`, kept until the user speaks again. Where the tool was
passed none of the candidates for the argument, the pick and its class depend on neither the tool
nor the argument, so the holders keep that pick (`fresh_pick`), and the classed picks of aligned
values, for every argument.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

from stretto_core.learn.bindings.mention import Candidates, Named, candidates, clearest, keys_at, named_view
from stretto_core.learn.bindings.model import DESCRIBED_READ, MENTIONED, NAMED_OTHER, PLAIN
from stretto_core.sessions.focus import holds_key, keyish_keys
from stretto_core.sessions.state import ResultEntry, ToolState

_NOTHING: frozenset[str] = frozenset()

DATA_KEY_DIGITS = 4
"""A path key with this many digits or more is a record's id, not a field name."""


_SEGMENTS = re.compile(r"\[\*\]|\.")


@lru_cache(maxsize=65536)
def eligible_path(path: str) -> bool:
    """A path that names structure, so the same path recurs across results: usable as a source."""
    for seg in _SEGMENTS.split(path[1:]):
        if not seg or seg == "*~":
            continue
        if any(map(str.isspace, seg)) or sum(map(str.isdigit, seg)) >= DATA_KEY_DIGITS:
            return False
    return True


@dataclass(slots=True)
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
    return results[:-state.look_back - 1:-1]


@dataclass(slots=True)
class Holders:
    """The results of a pool holding a path, newest first, with what every pick there reads."""

    entries: list[ResultEntry]
    candidates: list[Candidates]
    version: int = -1
    """The `user_version` the fields below are current for."""
    flagged: frozenset[str] = frozenset()
    """Every key the user named in any of them."""
    named: bool = False
    """Some candidate with a key is named: a pick must weigh namings (else it is the newest's first open)."""
    fresh: Pick | None | bool = False
    """The free pick for an argument passed none of the candidates (the same for every such
    argument; False until known)."""
    views: list[Named | None] | None = None
    """The `named_view` of each entry the naming fields were computed from."""
    fresh_pool: tuple[int, int] | None = None
    """The pool (newest position, size) `fresh` was picked in, when `named`: naming weighs the
    record words of every result of the pool, not only of these."""
    picks: dict[tuple[int, int], Pick] | None = None
    """Picks by (result position, index) for an argument passed none of the candidates (their class
    is the same for every such argument), while the naming fields stand."""
    read: bool = False
    """A decision read these since the user last spoke (`rename_held` names only those)."""


def holders(state: ToolState, pool: list[ResultEntry], path: str) -> Holders:
    """The pool's results holding `path`, named as of the state's `user_version`.

    Cached in `state.views` by the results themselves, so pools that differ only in results
    without the path share one; one taken earlier is current again after `renamed`.
    """
    entries = [entry for entry in pool if path in entry.index.by_path]
    if not entries:
        return Holders([], [], state.user_version)
    tag = ("p", path, *[entry.position for entry in entries])
    got = state.views.get(tag)
    if got is None:
        if state.served:
            _drop_outgrown(state, path, entries[0].tool)
        got = state.views[tag] = gather(pool, path)
    got.read = True
    return renamed(state, path, got)


def rename_held(state: ToolState) -> int:
    """Bring every holders the state keeps (those decisions read lately) up to the user's latest
    words (`renamed`); returns how many were behind.

    For when the user speaks: the decision after the agent's next result then finds them named
    (the same naming it would derive itself: a holders is renamed once per `user_version`, and
    a result's naming is cached on it per version). Only those a decision read since the user
    last spoke, and whose pool is still their tool's, are named, not every source of the flow:
    what the next decision reads is most likely what the last one did, and no holders is named
    twice between two decisions (several messages in a row: the decision names it, as before)."""
    if not state.user_version:
        return 0
    behind = [(tag, held) for tag, held in state.views.items()
              if type(tag) is tuple and tag[0] == "p" and held.read and held.version != state.user_version]
    count = 0
    for tag, held in behind:
        held.read = False  # the user speaking again before a decision reads it: that decision names it
        path = tag[1]
        now = [entry.position for entry in pool_of(state, held.entries[0].tool) if path in entry.index.by_path]
        if tuple(now) == tag[2:]:  # its pool is still the tool's (a decision would read it)
            renamed(state, path, held)
            count += 1
    return count


def _drop_outgrown(state: ToolState, path: str, tool: str) -> None:
    """Forget the holders of `path` in `tool`'s earlier pools: a served state has one pool per
    tool (its newest `look_back` results), which only slides on, so they never recur."""
    views = state.views
    for tag in [t for t, held in views.items() if isinstance(t, tuple) and t[0] == "p" and t[1] == path
                and held.entries and held.entries[0].tool == tool]:
        del views[tag]


def gather(pool: list[ResultEntry], path: str) -> Holders:
    """The pool's results holding `path`, not yet named (`renamed`), and not cached."""
    entries = [entry for entry in pool if path in entry.index.by_path]
    return Holders(entries, [candidates(entry, path) for entry in entries])


def renamed(state: ToolState, path: str, held: Holders) -> Holders:
    """`held` (the holders of `path`) with its naming brought to the state's `user_version`."""
    if held.version == state.user_version:
        return held
    views = [named_view(state, entry, path) for entry in held.entries]
    if held.views is not None and not held.named and all(a is b for a, b in zip(views, held.views)):
        held.version = state.user_version
        return held  # nothing named, before or now: the fresh pick stands
    _name(held, views, state.user_version)
    return held


def _name(held: Holders, views: list[Named | None], version: int) -> None:
    """Set the naming fields of `held` from its entries' `named_view`s (and forget its fresh pick)."""
    held.version, held.views, held.fresh, held.picks = version, views, False, None
    flagged: frozenset[str] = _NOTHING  # the one empty set: a Holders naming none keeps no set of its own
    named = False
    for view, cands in zip(views, held.candidates):
        if view is not None:
            flagged |= view.keys
            named = named or any(cands.keys[i] for i in view.named)
    held.flagged, held.named = flagged, named


def _meets(passed: set[str] | frozenset[str], keys: dict[str, int]) -> bool:
    """Some value passed is among `keys` (walking the smaller side: a long session passes many)."""
    if len(passed) > len(keys):
        for k in keys:
            if k in passed:
                return True
        return False
    for k in passed:
        if k in keys:
            return True
    return False


def _held(key: str, held: Holders) -> bool:
    """Some result of `held` has `key` among its candidates."""
    for cands in held.candidates:
        if key in cands.first:
            return True
    return False


def _any_held(passed: set[str] | frozenset[str], held: Holders) -> bool:
    """Some value passed is among the candidates of `held`."""
    if passed:
        for cands in held.candidates:
            if _meets(passed, cands.first):
                return True
    return False


def _passed_held(passed: set[str] | frozenset[str], held: Holders) -> list[str]:
    """The values passed that are among the candidates of `held` (walking the smaller side)."""
    if len(passed) <= sum(len(cands.first) for cands in held.candidates):
        return [k for k in passed if _held(k, held)]
    return list(dict.fromkeys(k for cands in held.candidates for k in cands.first if k in passed))


def free_pick(state: ToolState, tool: str, arg: str, pool: list[ResultEntry], path: str) -> Pick | None:
    """The free pick at (the pool's tool, `path`) for argument `arg` of `tool` (module docstring)."""
    return free_pick_held(state, tool, arg, pool, path, holders(state, pool, path),
                          state.passed_values(tool, arg))


def free_pick_held(state: ToolState, tool: str, arg: str, pool: list[ResultEntry], path: str,
                   held: Holders, passed: set[str] | frozenset[str]) -> Pick | None:
    """`free_pick` given `holders(state, pool, path)` and `state.passed_values(tool, arg)`."""
    if not held.entries:
        return None
    if not _any_held(passed, held):
        return fresh_pick(state, pool, path, held)
    found = _free_choice(state, pool, path, held, passed)
    return None if found is None else pick_held(state, tool, arg, held, path, passed, *found)


def fresh_pick(state: ToolState, pool: list[ResultEntry], path: str, held: Holders) -> Pick | None:
    """The free pick at `path` for an argument its tool was passed none of the candidates for: the
    same for every such argument and tool (kept on `held` until it is `renamed`)."""
    if not held.entries:
        return None
    if held.fresh is False or (held.named and held.fresh_pool != (pool[0].position, len(pool))):
        found = _free_choice(state, pool, path, held, _NOTHING)
        if found is None:
            held.fresh = None
        elif not held.flagged:  # nothing named and nothing passed: plain
            entry, index = found
            held.fresh = Pick(entry.index.by_path[path][index], keys_at(entry, path)[index], index, entry, PLAIN)
        else:  # with nothing passed, the class depends on neither the tool nor the argument
            held.fresh = pick_held(state, "", "", held, path, _NOTHING, *found)
        held.fresh_pool = (pool[0].position, len(pool)) if held.named else None
    return held.fresh


def _free_choice(state: ToolState, pool: list[ResultEntry], path: str, held: Holders,
                 passed: set[str] | frozenset[str]) -> tuple[ResultEntry, int] | None:
    """The result and index of the free pick, before it is classed."""
    if not held.named:  # nothing named: the first open candidate of the newest result holding the path
        indexes = _open(held.candidates[0], passed)
        return (held.entries[0], indexes[0]) if indexes else None
    open_: list[tuple[ResultEntry, Sequence[int]]] = []
    for entry, cands in zip(held.entries, held.candidates):
        indexes = _open(cands, passed)
        if indexes:
            open_.append((entry, indexes))
    if not open_:
        return None
    named = clearest(state, pool, path, open_)
    if named is not None:
        return named
    newest, indexes = open_[0]
    if newest is not held.entries[0]:
        return None  # the newest result holding the path has nothing left, and no naming
    return newest, indexes[0]


def _open(cands: Candidates, passed: set[str] | frozenset[str]) -> Sequence[int]:
    """The indexes of candidates the tool was not yet passed for the argument (do not modify)."""
    if not _meets(passed, cands.first):
        return cands.keyed
    keys = cands.keys
    return [i for i in cands.keyed if keys[i] not in passed]


def pick_held(state: ToolState, tool: str, arg: str, held: Holders, path: str,
               passed: set[str] | frozenset[str], entry: ResultEntry, index: int) -> Pick:
    """The pick of the candidate at `index` of `path` in `entry` (one of `held`'s), classed."""
    if _any_held(passed, held):
        return Pick(entry.index.by_path[path][index], keys_at(entry, path)[index], index, entry,
                    _classify_held(state, tool, arg, held, path, passed, entry, index))
    picks = held.picks
    if picks is None:
        picks = held.picks = {}
    pick = picks.get((entry.position, index))
    if pick is None:
        pick = picks[(entry.position, index)] = Pick(
            entry.index.by_path[path][index], keys_at(entry, path)[index], index, entry,
            _classify_held(state, tool, arg, held, path, passed, entry, index))
    return pick


def classify(state: ToolState, tool: str, arg: str, pool: list[ResultEntry], path: str,
             entry: ResultEntry, index: int) -> str:
    """The mention class of the candidate at `index` of `path` in `entry` (module docstring)."""
    if not state.user_version and not state.given:
        return PLAIN
    return _classify_held(state, tool, arg, holders(state, pool, path), path,
                          state.passed_values(tool, arg), entry, index)


def _classify_held(state: ToolState, tool: str, arg: str, held: Holders, path: str,
                   passed: set[str] | frozenset[str], entry: ResultEntry, index: int) -> str:
    """`classify`, given the pool's holders of the path and the values passed for the argument."""
    if not state.user_version and not state.given:
        return PLAIN
    key = keys_at(entry, path)[index]
    if state.user_version:
        view = named_view(state, entry, path)
        if view is not None and view.flags[index]:
            return MENTIONED
        flagged = held.flagged
        if flagged and (len(flagged) > 1 or key not in flagged):
            return NAMED_OTHER
    for k in _passed_held(passed, held) if passed else ():
        if k != key:
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
    keyish = keyish_keys(read.index)
    if not isinstance(keyish, (tuple, frozenset)):  # made afresh at each call: kept
        keyish = read.cache.get("keyish")
        if keyish is None:
            keyish = read.cache["keyish"] = list(keyish_keys(read.index))
    user, held = state.user, listing.index
    answer = any((k in state.given or user.wrote(k)) and not holds_key(held, k) for k in keyish)
    read.cache[tag] = (version, answer)
    return answer
