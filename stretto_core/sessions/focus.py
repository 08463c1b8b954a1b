"""Which paths of a tool's results a served flow's decisions read, and results indexed on them alone.

A binding reads a result only where one of the flow's sources points (`get_user_details
$.orders[*]`): the values at the source's path, and, for a path inside a list, every value of
the same list's elements (record words, record alignment). Everything else a result holds is
read for one question only: did some result hold this key-like value (`is_keyish`) before the
agent passed it (`ToolState.given`, the `described_read` class). So a served session indexes
each result on its focus, and keeps the rest as the set of its key-like values: what a decision
sees is the same, and a result of a tool that is no source costs a few strings.

The focus of a tool, from the flow's sources of that tool:

    a source path inside a list (`$.flights[*].date`)   every path starting with its list prefix
                                                        (`$.flights[*]`), as `record_words` reads
    a source path in no list (`$.user_id`, `$`)          that path

but never a record's key names (`$.flights[*].*~`, what `values.leaves_addressed` yields for the
names of an object's fields) unless a source reads them: record words, tokens and record
alignment skip them, so a listing's field names would cost each result a table per object.
"""

from __future__ import annotations

import operator
import re
from itertools import chain
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping

from stretto_core.sessions.focus_walk import split_leaves
from stretto_core.sessions.shared_tuples import shared
from stretto_core.sessions.values import ValueIndex, leaves_addressed, normalize, parse_result

LIST_MARK = "[*]"

KEY_NAMES = "*~"
"""How a path of an object's field names ends (`$.items[*].*~`)."""

_ASCII_DIGIT = re.compile("[0-9]")

FEW_KEYISH = 32
"""A result's key-like values are kept as a tuple up to this many (a set's table costs several
times a tuple's; looking through a few is as quick as hashing)."""

MAX_PATHS_CACHED = 65536
"""A focus remembers its answer for at most this many distinct paths (then starts afresh)."""

NOTHING_HELD: Mapping[Any, Any] = MappingProxyType({})
"""The table a focused index leaves empty (one read-only table for all, not an empty dict each)."""


@lru_cache(maxsize=65536)
def list_prefix(path: str) -> str | None:
    """The path of the list a value's record belongs to (`$.flights[*]`), or None."""
    cut = path.rfind(LIST_MARK)
    return None if cut < 0 else path[:cut + len(LIST_MARK)]


def is_keyish(key: str) -> bool:
    """A normalized value that looks like a key a person gives: at least 4 characters, a digit."""
    return len(key) >= 4 and any(ch.isdigit() for ch in key)


@dataclass
class ToolFocus:
    """The paths of one tool's results that decisions read."""

    exact: frozenset[str]
    prefixes: tuple[str, ...]
    _seen: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    """Path -> the focus's own copy of it when held, "" when not (each result builds its paths
    afresh: its index keeps this one string per path, shared by every result of the process)."""
    _under: dict[str, bool] = field(default_factory=dict, repr=False, compare=False)

    def holds(self, path: str) -> bool:
        return bool(self.kept_path(path))

    def kept_path(self, path: str) -> str:
        """The one string kept for `path` when decisions read it, else ""."""
        got = self._seen.get(path)
        if got is None:
            got = path if path in self.exact or (not path.endswith(KEY_NAMES) and
                                                 any(path.startswith(p) for p in self.prefixes)) else ""
            if len(self._seen) >= MAX_PATHS_CACHED:
                self._seen.clear()
            self._seen[path] = got
        return got

    def covers(self, path: str) -> bool:
        """`path` lies under a focus prefix: every path below it is held, but field names'."""
        for prefix in self.prefixes:
            if path.startswith(prefix):
                return True
        return False

    def may_hold(self, path: str) -> bool:
        """Some path at or under `path` may be held (`holds`): a focus path starts with it, or it
        starts with a prefix; False only when no path at or under it is (text prefixes: a subtree
        `$.order` is asked about `$.orders[*]` too, which only ever says yes more often). A path
        of field names holds nothing under it: only itself, when held (`kept_path`); unheld, the
        names are walked bare, as key-like values only."""
        got = self._under.get(path)
        if got is None:
            if path.endswith(KEY_NAMES):
                got = path in self.exact
            else:
                got = (any(e.startswith(path) for e in self.exact)
                       or any(p.startswith(path) or path.startswith(p) for p in self.prefixes))
            if len(self._under) >= MAX_PATHS_CACHED:
                self._under.clear()
            self._under[path] = got
        return got


@dataclass
class Focus:
    """Per tool, the paths decisions read; a tool without one is read for its key-like values only."""

    tools: dict[str, ToolFocus] = field(default_factory=dict)

    @classmethod
    def of_sources(cls, sources: Iterable[tuple[str, str]]) -> "Focus":
        """The focus of a set of sources, each `(tool, path)`."""
        exact: dict[str, set[str]] = {}
        prefixes: dict[str, set[str]] = {}
        for tool, path in sources:
            prefix = list_prefix(path)
            if prefix is None or path.endswith(KEY_NAMES):  # key names are held only where read
                exact.setdefault(tool, set()).add(path)
            if prefix is not None:
                prefixes.setdefault(tool, set()).add(prefix)
        return cls({tool: ToolFocus(frozenset(exact.get(tool, ())), tuple(sorted(prefixes.get(tool, ()))))
                    for tool in sorted(set(exact) | set(prefixes))})

    def of(self, tool: str) -> ToolFocus | None:
        return self.tools.get(tool)


class Pairs:
    """The (address, value) pairs at one path, in document order, kept as two sequences (a tuple
    per value would cost more than the value): iterates as `ValueIndex.records`' lists do.
    Lists while the result is indexed, then tuples (`freeze`: no room kept for more)."""

    __slots__ = ("addresses", "values")

    def __init__(self) -> None:
        self.addresses: list[tuple[int, ...]] | tuple[tuple[int, ...], ...] = []
        self.values: list[Any] | tuple[Any, ...] = []

    def append(self, pair: tuple[tuple[int, ...], Any]) -> None:
        if isinstance(self.values, tuple):  # frozen: lists again
            self.addresses, self.values = list(self.addresses), list(self.values)
        self.addresses.append(pair[0])  # type: ignore[union-attr]
        self.values.append(pair[1])  # type: ignore[union-attr]

    def freeze(self) -> None:
        """Tuples from now on; the addresses as the process's one tuple of them (the paths of one
        list's fields hold the same addresses, `shared_tuples`)."""
        self.addresses, self.values = shared(tuple(self.addresses)), tuple(self.values)

    def __iter__(self) -> Iterator[tuple[tuple[int, ...], Any]]:
        return zip(self.addresses, self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i: int) -> tuple[tuple[int, ...], Any]:
        return self.addresses[i], self.values[i]


@dataclass(slots=True)
class FocusedIndex(ValueIndex):
    """A `ValueIndex` of the focus paths only, with every key-like value of the whole result.

    It keeps `records`, `by_path` and `keys`; `first_path` and `paths` stay empty (a served
    decision asks of them only which keys the result holds, `index_keys`, and where, which
    `keys` answers), and so does the memory of a key per path.
    """

    keyish: frozenset[str] | tuple[str, ...] = frozenset()
    """Every key-like value of the whole result: a tuple when there are few (`FEW_KEYISH`; in
    the frozenset's order), else a frozenset."""

    @property
    def all_keys(self) -> tuple[str, ...]:
        """Every key at the focus paths, each once (derived from `keys` when asked: read once per
        result, by `mention._writable_keys`, which keeps what it needs; not kept a second time)."""
        every = dict.fromkeys(chain.from_iterable(self.keys.values()))
        every.pop("", None)  # the key of a value that has none (`normalize` gave None)
        return tuple(every)


class KeyishOnly:
    """What is kept of a result a call's value points to (`ToolState.result_for`): its key-like
    values alone, all that `described_read` asks of it (a few pointers, not an index's tables)."""

    __slots__ = ("keyish",)

    def __init__(self, keyish: frozenset[str] | tuple[str, ...]) -> None:
        self.keyish = keyish


def index_keys(index: ValueIndex) -> Iterable[str]:
    """Every key the index holds (`first_path`'s keys)."""
    return index.all_keys if isinstance(index, FocusedIndex) else index.first_path


def keyish_keys(index: ValueIndex | KeyishOnly) -> Iterable[str]:
    """The key-like values a result holds, at any path."""
    if isinstance(index, (FocusedIndex, KeyishOnly)):
        return index.keyish
    return [k for k in index.first_path if is_keyish(k)]


def holds_key(index: ValueIndex, key: str) -> bool:
    """The result holds `key`, a key-like value, at some path."""
    return key in index.keyish if isinstance(index, FocusedIndex) else key in index.first_path


def holds_under(index: ValueIndex, keys: Iterable[str], prefix: str) -> bool:
    """Some of `keys` is held at a path starting with `prefix`."""
    if isinstance(index, FocusedIndex):
        wanted = keys if isinstance(keys, (set, frozenset)) else set(keys)
        return any(path.startswith(prefix) and not wanted.isdisjoint(held) for path, held in index.keys.items())
    paths = index.paths
    for key in keys:
        for path in paths.get(key, ()):
            if path.startswith(prefix):
                return True
    return False


def _has_digit(key: str) -> bool:
    """`is_keyish`'s digit test, quick for ASCII keys (whose only digits are 0-9)."""
    return bool(_ASCII_DIGIT.search(key)) if key.isascii() else any(map(str.isdigit, key))


def _nowhere(path: str) -> bool:
    """No focus: no path is held."""
    return False


def index_focused(text: str, parsed: Any, focus: ToolFocus | None) -> FocusedIndex:
    """`index_result` on the focus paths only (none when `focus` is None), and the key-like values
    of every path. On the focus paths, `records`, `by_path` and `keys` are `index_result`'s."""
    idx = FocusedIndex(first_path=NOTHING_HELD, paths=NOTHING_HELD)  # type: ignore[arg-type]
    records = idx.records
    at: dict[str, tuple[Pairs, dict[Any, str]]] = {}
    unhashable: set[str] = set()
    keyish: set[str] = set()
    seen: dict[str, str] = {}
    kept_path = focus.kept_path if focus is not None else None
    last: tuple[int, ...] | None = None
    kept_address: tuple[int, ...] = ()
    structure = parse_result(text, parsed)
    split = (split_leaves(structure, focus.may_hold, focus.covers) if focus is not None
             else split_leaves(structure, _nowhere))
    leaves, loose = (leaves_addressed(structure), ()) if split is None else split
    search = _ASCII_DIGIT.search  # `_has_digit`, inline: a leaf each
    for value in loose:  # out of focus: only whether it is key-like counts
        if type(value) is str and value.isascii():  # `normalize` is then strip and lower, and keeps digits
            if search(value) is not None:
                key = value.strip().lower()
                if len(key) >= 4:
                    keyish.add(value if key == value else key)  # the result's own string kept, not a copy
            continue
        key = normalize(value)
        if key is not None and len(key) >= 4 and _has_digit(key):
            keyish.add(value if key == value else key)  # the result's own string kept, not a copy
    for path, address, value in leaves:
        kind = type(value)
        if kind is str:
            key = value.strip()
            if not key:
                continue
            key = key.casefold()
            if key == value:
                key = value  # one string, not two
        elif kind is int:
            key = str(value)
        else:
            key = normalize(value)
            if key is None:
                continue
        if len(key) >= 4 and (search(key) is not None if key.isascii() else any(map(str.isdigit, key))):
            keyish.add(key)
        kept = seen.get(path)
        if kept is None:
            kept = seen[path] = kept_path(path) if kept_path is not None else ""
        if not kept:
            continue
        path = kept
        slot = at.get(path)
        if slot is None:
            slot = at[path] = (Pairs(), {})
            records[path] = slot[0]  # type: ignore[assignment]
        if address is not last:  # the leaves of one element come together, with one address
            last, kept_address = address, shared(address)
        slot[0].addresses.append(kept_address)
        slot[0].values.append(value)
        try:
            slot[1].setdefault(value, key)
        except TypeError:
            unhashable.add(path)
    for path, (record, values) in at.items():
        record.freeze()
        if path in unhashable:
            bucket: list[Any] = []
            for _address, value in record:
                if value not in bucket:
                    bucket.append(value)
            idx.by_path[path], idx.keys[path] = tuple(bucket), tuple(normalize(v) or "" for v in bucket)  # type: ignore[assignment]
        else:  # tuples: a served index is never added to (and a tuple costs less than a list)
            distinct = record.values if len(values) == len(record) else tuple(values)  # no repeats: the same tuple
            keys = tuple(values.values())
            if all(map(operator.is_, keys, distinct)):  # every value is its own key (text already folded)
                keys = distinct
            idx.by_path[path], idx.keys[path] = distinct, keys  # type: ignore[assignment]
    if not records:  # no focus path: one read-only empty table for all three, not three dicts
        idx.records = idx.by_path = idx.keys = NOTHING_HELD  # type: ignore[assignment]
    held = frozenset(keyish)
    idx.keyish = tuple(held) if len(held) <= FEW_KEYISH else held
    return idx
