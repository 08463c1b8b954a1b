"""Where the user named a candidate of one result, for every path of it at once.

`mention.named_view` answers for one path: the candidates there the user named (a value they
wrote, or a value whose record holds a word they wrote), or None. Learning asks it of every
source path of every result of every pool, again each time the user speaks, and most of its
cost was asking, path by path. `named_table` gives the same answers for a whole result in one
pass over its source paths (`eligible_path`: the only paths learning asks about), from what
the user wrote of it:

    a value written   for each value k the user wrote, each path holding k (`ValueIndex.paths`)
    a record word     for each list the result holds whose elements hold a word the user
                      wrote (`element_hits`), each path under that list: its candidates in
                      those elements (`_keys_by_element`)

then keeps, per path, the candidates among them (as `named_view` flags them). A source path
absent from the table is one where `named_view` is None; a test holds the two equal on real
sessions.
"""

from __future__ import annotations

from stretto_core.learn.bindings.mention import Named, _keys_by_element, candidates, element_hits, written
from stretto_core.learn.bindings.pick import eligible_path
from stretto_core.sessions.focus import list_prefix
from stretto_core.sessions.state import ResultEntry, ToolState
from stretto_core.sessions.values import ValueIndex

NamedTable = dict[str, frozenset[str]]
"""Source path -> the keys of the candidates there the user named (only paths where some are)."""

_EMPTY: NamedTable = {}


def named_table(state: ToolState, entry: ResultEntry) -> NamedTable | None:
    """Source path -> `named_view(state, entry, path).keys`, for every source path where that is
    not None (do not modify); None in a served state (its index is focused, and the oldest of
    what the user said may be dropped: `named_view` answers there) or for an index that is not a
    whole `ValueIndex`.

    Cached on the entry per `user_version` (the user's words are all it depends on besides the
    result)."""
    if state.served or type(entry.index) is not ValueIndex:
        return None
    version = state.user_version
    if not version:
        return _EMPTY
    got = entry.cache.get("named")
    if got is not None and got[0] == version:
        return got[1]
    table = _named(state, entry)
    entry.cache["named"] = (version, table)
    return table


def _named(state: ToolState, entry: ResultEntry) -> NamedTable:
    said = written(state, entry)
    if not said:
        return _EMPTY
    index = entry.index
    found: dict[str, set[str]] = {}
    for key in said:  # the values written, where they are held
        for path in index.paths.get(key, ()):
            if not eligible_path(path):
                continue
            cands = candidates(entry, path)
            if cands is not None and key in cands.first:
                got = found.get(path)
                if got is None:
                    found[path] = {key}
                else:
                    got.add(key)
    for prefix, paths in lists_of(entry).items():  # the words written, in the records they are words of
        hits = element_hits(state, entry, prefix, said)
        if not hits:
            continue
        for path in paths:
            by_element = _keys_by_element(entry, path, prefix)
            for element in hits:
                keys = by_element.get(element)
                if keys:
                    got = found.get(path)
                    if got is None:
                        found[path] = set(keys)
                    else:
                        got.update(keys)
    table: NamedTable = {}
    for path, keys in found.items():  # the candidates among them (a record's 1 may be a candidate's True)
        cands = candidates(entry, path)
        flagged = frozenset(k for k in cands.keys if k in keys) if cands is not None else frozenset()
        if flagged:
            table[path] = flagged
    return table or _EMPTY


def lists_of(entry: ResultEntry) -> dict[str, list[str]]:
    """List prefix -> the source paths of the result whose values lie in that list's elements
    (its `list_prefix`), in the index's order (cached with its index)."""
    views = entry.index_views
    got = views.get("lists")
    if got is None:
        got = {}
        for path in entry.index.by_path:
            prefix = list_prefix(path)
            if prefix is not None and eligible_path(path):
                got.setdefault(prefix, []).append(path)
        views["lists"] = got
    return got


def view_of(entry: ResultEntry, path: str, keys: frozenset[str]) -> Named:
    """`named_view` at a path of the table, from its keys there (the candidates flagged in order)."""
    cands = candidates(entry, path)
    assert cands is not None
    flags = [k in keys for k in cands.keys]
    return Named(flags, [i for i, flag in enumerate(flags) if flag], keys)
