"""Where the user named a candidate of one result, for every path of it at once.

`mention.named_view` answers for one path: the candidates there the user named (a value they
wrote, or a value whose record holds a word they wrote), or None. Learning asks it of every
source path of every result of every pool, again each time the user speaks. `named_table`
gives the same answers for a whole result, from what the user wrote of it (`written`), one
value at a time:

    a value written   each source path (`eligible_path`) holding it among its candidates
    a record word     (a value written as a whole word, `element_hits`) for each list of the
                      result whose elements it is a word of, each source path under that list:
                      its candidates in those elements (`_keys_by_element`), the candidates
                      among them
    a record token    (`tokens`, written as a whole word) as a record word (`token_of`)

What one value names at the result's paths depends on the result alone, so it is kept with the
result's index (`_direct`, `_worded`), shared by every state holding the result. And the user's
words only grow: a value once written stays written, a word once written whole stays so. So the
table only ever gains, and when the user speaks it is brought up to date from the values written
since (and the words written, not yet as whole words, before), not made anew. A source path
absent from the table is one where `named_view` is None; a test holds the two equal on real
sessions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterable

from stretto_core.learn.bindings.mention import LIST_MARK, Named, _string_keys, _word_elements, candidates, written
from stretto_core.learn.bindings.pick import eligible_path
from stretto_core.learn.bindings.tokens import entry_tokens, token_elements, tokens_said
from stretto_core.sessions.focus import list_prefix
from stretto_core.sessions.state import ResultEntry, ToolState
from stretto_core.sessions.user_text import UserText
from stretto_core.sessions.values import ValueIndex, normalize

NamedTable = dict[str, frozenset[str]]
"""Source path -> the keys of the candidates there the user named (only paths where some are)."""

Targets = tuple[tuple[str, frozenset[str]], ...]
"""What one value names in a result: (source path, the keys of the candidates there)."""

_EMPTY: NamedTable = {}
_NONE: Targets = ()


@dataclass(slots=True)
class _Naming:
    """One result's table as of one `user_version`, with what bringing it up to date needs."""

    user: UserText
    """The user's words it was made from (a table only grows with those of one state)."""
    version: int = 0
    seen: set[str] = field(default_factory=set)
    """The values of `written` already weighed."""
    unwhole: dict[str, Worded] = field(default_factory=dict)
    """Record words written, but not yet as whole words -> what they name once they are."""
    tokens: frozenset[str] | set[str] = frozenset()
    """The record tokens already weighed (`tokens_said`, each written as a whole word)."""
    table: NamedTable = field(default_factory=dict)
    hit_lists: frozenset[str] = frozenset()
    """The lists (prefixes) an element of which holds a record word written as a whole word (where
    `element_hits` has some)."""


@dataclass(frozen=True, slots=True)
class Worded:
    """What one value of a result names as a record word (once written as a whole word)."""

    targets: Targets
    """At the source paths under the lists it is a word of, the candidates in its elements."""
    lists: frozenset[str]
    """The lists (prefixes, any under which it lies) it is a word of an element of."""


_NOT_A_WORD = Worded(_NONE, frozenset())


def named_table(state: ToolState, entry: ResultEntry) -> NamedTable | None:
    """Source path -> `named_view(state, entry, path).keys`, for every source path where that is
    not None (do not modify); None in a served state (its index is focused, and the oldest of
    what the user said may be dropped: `named_view` answers there) or for an index that is not a
    whole `ValueIndex`.

    Kept on the entry, brought up to date at each `user_version` (module docstring)."""
    naming = naming_of(state, entry)
    return None if naming is None else naming.table or _EMPTY


def naming_of(state: ToolState, entry: ResultEntry) -> _Naming | None:
    """The entry's `_Naming` as of the state's `user_version` (None where `named_table` is)."""
    if state.served or type(entry.index) is not ValueIndex:
        return None
    naming: _Naming | None = entry.cache.get("named")
    if naming is None or naming.user is not state.user or state.user.dropped:
        naming = entry.cache["named"] = _Naming(state.user)
    if naming.version != state.user_version:
        _bring_up(state, entry, naming)
    return naming


def _bring_up(state: ToolState, entry: ResultEntry, naming: _Naming) -> None:
    """Add to `naming.table` what the user named of `entry` since its version (a new table when
    it gains: callers may hold the old one)."""
    naming.version = state.user_version
    if not state.user_version:
        return
    said = written(state, entry)
    tokens = tokens_said(state, entry)
    seen, unwhole = naming.seen, naming.unwhole
    if len(said) == len(seen) and not unwhole and len(tokens) == len(naming.tokens):  # nothing new
        return
    gained: list[Targets] = []
    hit: list[frozenset[str]] = []
    for token in tokens - naming.tokens if len(tokens) > len(naming.tokens) else ():  # written whole
        worded = token_of(entry, token)
        if worded.lists:
            gained.append(worded.targets)
            hit.append(worded.lists)
    naming.tokens = tokens
    latest = state.user.latest
    for word in [w for w in unwhole if latest(w, True) is not None]:
        worded = unwhole.pop(word)
        gained.append(worded.targets)
        hit.append(worded.lists)
    by_key, by_word = _kept(entry, "nd"), _kept(entry, "nw")  # what `_direct` and `word_of` keep, read here
    for key in said - seen if len(said) > len(seen) else ():
        seen.add(key)
        direct = by_key.get(key)
        if direct is None:
            direct = _direct(entry, key)
        if direct:
            gained.append(direct)
        worded = by_word.get(key)
        if worded is None:
            worded = word_of(entry, key)
        if worded.lists:
            if latest(key, True) is None:
                unwhole[key] = worded
            else:
                gained.append(worded.targets)
                hit.append(worded.lists)
    if hit:
        naming.hit_lists = naming.hit_lists.union(*hit)
    if any(gained):
        table = dict(naming.table)
        for targets in gained:
            for path, keys in targets:
                held = table.get(path)
                table[path] = keys if held is None else held | keys
        naming.table = table


def _kept(entry: ResultEntry, tag: object) -> dict:
    """A table of answers kept with the entry's index under `tag` (made empty the first time)."""
    views = entry.index_views
    got = views.get(tag)
    if got is None:
        got = views[tag] = {}
    return got


def _direct(entry: ResultEntry, key: str) -> Targets:
    """The source paths where `key` is a candidate (kept with the index)."""
    by_key = _kept(entry, "nd")
    got = by_key.get(key)
    if got is None:
        one = frozenset((key,))
        found = []
        for path in entry.index.paths.get(key, ()):
            if eligible_path(path):
                cands = candidates(entry, path)
                if cands is not None and key in cands.first:
                    found.append((path, one))
        got = by_key[key] = tuple(found) if found else _NONE
    return got


def word_of(entry: ResultEntry, word: str) -> Worded:
    """What `word`, a value of the result, names as a record word (kept with the index): a record
    word is a value at a path under a list, never a key of a record (`*~`)."""
    by_word = _kept(entry, "nw")
    got = by_word.get(word)
    if got is None:
        got = by_word[word] = _made_word(entry, word)
    return got


def _made_word(entry: ResultEntry, word: str) -> Worded:
    """`word_of`, made: most values asked are a record word of no list (three in four in τ²
    retail), so the lists a value lies under are read per path (`_word_lists`, shared by every
    result) and the result's own tables only where it is one."""
    if not any(map(str.isalpha, word)):  # a record word has a letter (`mention.record_words`)
        return _NOT_A_WORD
    paths = entry.index.paths.get(word)
    if not paths:
        return _NOT_A_WORD
    prefixes = _word_lists(paths[0]) if len(paths) == 1 else tuple(dict.fromkeys(
        p for path in paths for p in _word_lists(path)))
    return _worded(entry, word, prefixes, _word_elements) if prefixes else _NOT_A_WORD


def token_of(entry: ResultEntry, token: str) -> Worded:
    """What `token`, a record token of the result (`tokens`), names once written as a whole word
    (kept with the index)."""
    by_token = _kept(entry, "nk")
    got = by_token.get(token)
    if got is None:
        prefixes = tuple(dict.fromkeys(p for path in entry_tokens(entry).get(token, ()) for p in _word_lists(path)))
        got = by_token[token] = _worded(entry, token, prefixes, token_elements)
    return got


def _worded(entry: ResultEntry, word: str, prefixes: Iterable[str],
            elements_of: Callable[[ResultEntry, str], dict[str, tuple[tuple[int, ...], ...]]]) -> Worded:
    """What `word` names in the elements `elements_of` gives it, under each of the lists
    `prefixes` (the lists the paths it was found at lie in)."""
    targets: list[tuple[str, frozenset[str]]] = []
    found: list[str] = []
    lists: dict[str, list[str]] | None = None
    for prefix in prefixes:
        elements = elements_of(entry, prefix).get(word)
        if elements:
            found.append(prefix)
            if lists is None:
                lists = lists_of(entry)
            if prefix in lists:
                for element in elements:
                    targets += _element_targets(entry, prefix, element)
    return Worded(tuple(targets), frozenset(found)) if found else _NOT_A_WORD


@lru_cache(maxsize=65536)
def _word_lists(path: str) -> tuple[str, ...]:
    """The lists a value at `path` is a record word of, if any (`lists_under`; none for a key of a
    record, `*~`)."""
    return () if path.endswith("*~") else tuple(lists_under(path))


def _element_targets(entry: ResultEntry, prefix: str, element: tuple[int, ...]) -> Targets:
    """The candidates in one element of the list at `prefix`, at each source path under the list
    holding some (kept with the index, for every element of the list at once: `_list_targets`)."""
    by_element = entry.index_views.get(("nt", prefix))
    if by_element is None:
        by_element = _list_targets(entry, prefix)
    return by_element.get(element, _NONE)


def _list_targets(entry: ResultEntry, prefix: str) -> dict[tuple[int, ...], Targets]:
    """Element of the list at `prefix` -> `_element_targets` there, each source path's records read
    once: a key is flagged in an element where a record there holds it and it is a candidate of the
    path (a record's 1 may be a candidate's True), as `_keys_by_element` and `candidates` tell."""
    depth = prefix.count(LIST_MARK)
    records = entry.index.records
    per_element: dict[tuple[int, ...], list[tuple[str, frozenset[str]]]] = {}
    for path in lists_of(entry)[prefix]:
        cands = candidates(entry, path)
        held = cands.first if cands is not None else _NO_CANDIDATES
        known = _string_keys(entry, path)
        flagged: dict[tuple[int, ...], set[str]] = {}
        for address, value in records.get(path, ()):
            key = (known.get(value) if type(value) is str else None) or normalize(value) or ""
            if key in held:
                element = address[:depth]
                keys = flagged.get(element)
                if keys is None:
                    flagged[element] = {key}
                else:
                    keys.add(key)
        for element, keys in flagged.items():
            targets = per_element.get(element)
            if targets is None:
                per_element[element] = [(path, frozenset(keys))]
            else:
                targets.append((path, frozenset(keys)))
    got = entry.index_views[("nt", prefix)] = {element: tuple(t) for element, t in per_element.items()}
    return got


_NO_CANDIDATES: dict[str, int] = {}


def lists_under(path: str) -> list[str]:
    """The prefix of a path up to and including each of its `[*]`: every list it lies under."""
    out, at = [], path.find(LIST_MARK)
    while at >= 0:
        out.append(path[:at + len(LIST_MARK)])
        at = path.find(LIST_MARK, at + 1)
    return out


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
