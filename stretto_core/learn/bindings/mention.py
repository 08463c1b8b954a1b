"""Which candidates the user named, and which of them most clearly.

A candidate value at a source path is named by the user when

- they wrote the value itself (case-insensitive substring, ≥ 3 characters, or its rest
  after a sigil as a whole word: `sessions/value_written`, as `ToolState.mentioned`), or
- they wrote, as whole words, a word of its record: a string of ≥ `MIN_RECORD_WORD`
  characters with a letter held in the same element of the source's list (`$.items[*]` for
  `$.items[*].product_id`: the item's name, its options) and not held by every element of that
  list in that result (words all records share name none of them), or
- they wrote, as a whole word, a token of its record: a distinguishing word of a multi-word
  name in that element ("helmet" of `Cycling Helmet`, `tokens`).

When several open candidates are named, the binding takes the one named most clearly:

    strength(x) = 1                          x itself was written
                = max over its words and tokens w of 1 / df(w)
    df(w)       = elements, over the results of the source's pool, whose hits include w

so a word one record holds ("laptop") outranks one many hold ("black"). Ties go to the latest
user message, then to the earliest place in it (users list what they want in the order they
want it), then to the newest result and document order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from stretto_core.learn.bindings.tokens import MIN_RECORD_WORD, token_elements, tokens_said
from stretto_core.sessions.focus import LIST_MARK, NOTHING_HELD, holds_under, index_keys, list_prefix
from stretto_core.sessions.shared_tuples import frozen
from stretto_core.sessions.state import ResultEntry, ToolState
from stretto_core.sessions.value_written import find_word, written_in
from stretto_core.sessions.values import normalize

MIN_WRITTEN = 3
"""Values shorter than this are never named (as a value: 3 characters; as a record word:
`MIN_RECORD_WORD`), so `written` leaves them out."""


@dataclass(frozen=True)
class Naming:
    """How clearly the user named one candidate (bigger is clearer)."""

    strength: float
    message: int
    position: int

    def rank(self) -> tuple[float, int, int]:
        return (self.strength, self.message, -self.position)




@dataclass(slots=True)
class Candidates:
    """The candidates at one path of one result, as picks compare them."""

    keys: list[str]
    """Normalized, as `entry.index.by_path[path]` ("" for none)."""
    first: dict[str, int]
    """Key -> the first index holding it."""
    keyed: Sequence[int]
    """The indexes with a key (every candidate a pick may take), ascending."""


_UNKNOWN = object()


def candidates(entry: ResultEntry, path: str) -> Candidates | None:
    """The candidates at `path` in `entry` (cached with its index), or None when it holds none.

    Asked about 20,000 times a learn, nearly always of a path asked before: read from the
    index's table at once, made (`_made_candidates`) only when not there yet."""
    try:
        got = entry.index.views["c"].get(path, _UNKNOWN)  # type: ignore[union-attr]
    except (TypeError, KeyError, AttributeError):  # no views yet, no table; an index of another kind
        got = _UNKNOWN
    return _made_candidates(entry, path) if got is _UNKNOWN else got  # type: ignore[return-value]


def _made_candidates(entry: ResultEntry, path: str) -> Candidates | None:
    """`candidates`, made and kept in the index's views (or the entry's, for an index of another kind)."""
    index = entry.index
    views = entry.index_views
    by_path = views.get("c")
    if by_path is None:
        by_path = views["c"] = {}
    else:
        got = by_path.get(path, _UNKNOWN)
        if got is not _UNKNOWN:
            return got  # type: ignore[return-value]
    values = index.by_path.get(path)
    got = None
    if values:
        keys = index.keys.get(path)
        if keys is None or len(keys) != len(values):  # an index not made by `index_result`
            keys = [normalize(v) or "" for v in values]
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            first.setdefault(k, i)
        keyed = range(len(keys)) if "" not in first else [i for i, k in enumerate(keys) if k]
        got = Candidates(keys, first, keyed)
    by_path[path] = got
    return got


def keys_at(entry: ResultEntry, path: str) -> list[str]:
    """The normalized candidates at `path` (as `entry.index.by_path[path]`, "" for none)."""
    got = candidates(entry, path)
    return got.keys if got is not None else []


def addresses(entry: ResultEntry, path: str) -> dict[str, tuple[tuple[int, ...], ...]]:
    """Normalized value -> its addresses at `path`, in document order (cached with its index)."""
    views = entry.index_views
    got = views.get(("a", path))
    if got is None:
        known = _string_keys(entry, path)
        places: dict[str, list[tuple[int, ...]]] = {}
        for address, value in entry.index.records.get(path, ()):
            key = known.get(value) if type(value) is str else None
            places.setdefault(key or normalize(value) or "", []).append(address)
        got = views[("a", path)] = _frozen(places)
    return got


def _string_keys(entry: ResultEntry, path: str) -> dict[str, str]:
    """The index's own normalized form of each string value at `path` (so views of the result keep
    the strings it holds, not copies)."""
    values, keys = entry.index.by_path.get(path), entry.index.keys.get(path)
    if not values or keys is None or len(keys) != len(values):
        return {}
    return {v: k for v, k in zip(values, keys) if type(v) is str}


def _frozen(table: dict[str, list[tuple[int, ...]]]) -> dict[str, tuple[tuple[int, ...], ...]]:
    """A cached table's lists as tuples (a list grown by appends holds room for more; a single
    address, the most common, as the process's one tuple of it: `shared_tuples`)."""
    return frozen(table)


_ASCII_LETTER = re.compile("[A-Za-z]")


def _has_letter(text: str) -> bool:
    """`any(c.isalpha() for c in text)`, without a step per character where it can (an ASCII
    text's letters are A-Z and a-z)."""
    if text.isalpha():
        return True
    if text.isascii():
        return _ASCII_LETTER.search(text) is not None
    return any(c.isalpha() for c in text)


def record_words(entry: ResultEntry, prefix: str) -> dict[tuple[int, ...], list[str]]:
    """Element address -> the distinguishing words of that element of the list at `prefix` (not
    cached: `_word_elements` keeps what is read of it)."""
    depth = prefix.count(LIST_MARK)
    words: dict[tuple[int, ...], set[str]] = {}
    index = entry.index
    for path, pairs in index.records.items():
        if not path.startswith(prefix) or path.endswith("*~"):
            continue
        values = index.by_path.get(path)
        folded = values is not None and index.keys.get(path) is values  # every value is its own key
        known = {} if folded else _string_keys(entry, path)
        last: tuple[int, ...] | None = None
        held: set[str] = set()
        for address, value in pairs:
            if type(value) is not str:
                if not (isinstance(value, str) and len(value) >= MIN_RECORD_WORD and _has_letter(value)):
                    continue
                key = normalize(value) or ""
            elif len(value) < MIN_RECORD_WORD or not _has_letter(value):
                continue
            else:
                key = value if folded else known.get(value) or normalize(value) or ""
            if address is not last:  # the values of one element come together, with one address
                last = address
                element = address[:depth]
                held = words.get(element)  # type: ignore[assignment]
                if held is None:
                    held = words[element] = set()
            held.add(key)
    shared = set.intersection(*words.values()) if len(words) > 1 else set()
    return {addr: sorted(ws - shared) for addr, ws in words.items()}


def _find_word(text: str, word: str) -> int:
    """The first place `word` occurs in `text` as a whole word (not inside a longer one), or -1."""
    return find_word(text, word)


def _latest(state: ToolState, word: str, whole: bool) -> tuple[int, int] | None:
    """(message, position) of the latest user message writing the value `word` (`value_written`), or None."""
    return state.user.latest_written(word, whole)


def written(state: ToolState, entry: ResultEntry) -> set[str]:
    """The entry's values (normalized) that some user message holds (do not modify).

    Only these can be named, as a value (of 3 characters or more) or as a record word, so values
    shorter than `MIN_WRITTEN` are left out.
    """
    return _said(state, entry)[1]


def _said(state: ToolState, entry: ResultEntry) -> tuple[int, set[str]]:
    """(messages read, `written`), brought up to date with the messages since (cached on the
    entry: messages are only ever appended)."""
    user = state.user
    count = user.count
    got = entry.cache.get("said")
    if got is not None and got[0] == count:
        return got
    seen, found = (0, _NO_KEYS) if got is None else got
    keys = _writable_keys(entry)
    if seen <= user.dropped:  # every message kept is new to this entry: ask the user's text
        new = user.holding(keys)
    else:
        messages = user.since(seen)
        joined = messages[0] if len(messages) == 1 else "\n".join(messages)
        # One scan of the new text per value, then each message for the few found (a value may
        # span two messages in `joined`, never in one); a value with a sigil may be written bare.
        maybe = [k for k in keys if k in joined or (not k[0].isalnum() and written_in(joined, k))]
        new = [k for message in (messages if maybe else ()) for k in maybe if written_in(message, k)]
    if new:  # an entry none of whose values the user wrote shares one empty set
        if found is _NO_KEYS:
            found = set()
        found.update(new)  # type: ignore[attr-defined]
    got = entry.cache["said"] = (count, found)
    return got


def _writable_keys(entry: ResultEntry) -> tuple[str, ...]:
    """The entry's keys of `MIN_WRITTEN` characters or more, the only ones `written` looks for
    (kept with its index: a result many sessions share is filtered once)."""
    views = entry.index_views
    got = views.get("writable")
    if got is None:
        every = index_keys(entry.index)
        kept = [k for k in every if len(k) >= MIN_WRITTEN]
        # A focused index's keys come as a new tuple (`all_keys`): when all are long enough, kept as they are.
        got = views["writable"] = every if type(every) is tuple and len(kept) == len(every) else tuple(kept)
    return got


def _word_elements(entry: ResultEntry, prefix: str) -> dict[str, tuple[tuple[int, ...], ...]]:
    """Record word of the list at `prefix` -> the elements whose words it is (cached with its index)."""
    views = entry.index_views
    got = views.get(("we", prefix))
    if got is None:
        elements: dict[str, list[tuple[int, ...]]] = {}
        for element, words in record_words(entry, prefix).items():
            for word in words:
                elements.setdefault(word, []).append(element)
        got = views[("we", prefix)] = _frozen(elements)
    return got


def _any_under(entry: ResultEntry, keys: set[str], prefix: str) -> bool:
    """Some of `keys` is a value of the entry under the list at `prefix` (so may be a record word)."""
    return holds_under(entry.index, keys, prefix)


def element_hits(state: ToolState, entry: ResultEntry, prefix: str,
                 said: set[str] | None = None) -> dict[tuple[int, ...], dict[str, tuple[int, int]]]:
    """Element address -> its record words the user wrote, each with where (message, position).
    `said`: `written(state, entry)`, when the caller has it."""
    tag = ("h", prefix)
    version = state.user_version
    cached = entry.cache.get(tag)
    if type(cached) is int:  # no hits as of that version
        if cached == version:
            return NOTHING_HELD  # type: ignore[return-value]
    elif cached is not None and cached[0] == version:
        return cached[1]
    hits: dict[tuple[int, ...], dict[str, tuple[int, int]]] = {}
    if not version:
        said = set()
    elif said is None:
        said = written(state, entry)
    index = _word_elements(entry, prefix) if said and _any_under(entry, said, prefix) else {}
    for word in said:  # a word the user wrote as a whole word, they wrote
        if word in index:
            where = _latest(state, word, whole=True)
            if where is not None:
                for element in index[word]:
                    hits.setdefault(element, {})[word] = where
    tokens = tokens_said(state, entry) if version else ()
    if tokens:  # a distinguishing word of a record's name, written as a whole word (`tokens`)
        by_token = token_elements(entry, prefix)
        for token in tokens:
            elements = by_token.get(token)
            if elements:
                where = _latest(state, token, whole=True)
                if where is not None:
                    for element in elements:
                        hits.setdefault(element, {})[token] = where
    if not hits:  # one empty table for every entry without one, and only the version kept
        entry.cache[tag] = version
        return NOTHING_HELD  # type: ignore[return-value]
    entry.cache[tag] = (version, hits)
    return hits


def namings(state: ToolState, entry: ResultEntry, path: str) -> list[tuple[tuple[int, int] | None, dict[str, tuple[int, int]]]]:
    """For each candidate at `path`: where the user wrote the value itself, and its record words they wrote."""
    context = _naming_context(state, entry, path)
    return [_naming_of(state, context, key) for key in keys_at(entry, path)]


NamingAt = tuple["tuple[int, int] | None", dict[str, tuple[int, int]]]
"""Where the user wrote a candidate's value itself (or None), and its record words they wrote."""


@dataclass(slots=True)
class _NamingContext:
    """What the namings of one path of one result draw on at one `user_version`, and those asked."""

    version: int
    hits: dict[tuple[int, ...], dict[str, tuple[int, int]]]
    where: dict[str, tuple[tuple[int, ...], ...]]
    depth: int
    said: set[str] | tuple[()]
    asked: dict[str, NamingAt]
    """Key -> its naming (a candidate's naming is its key's: two equal keys are named alike)."""


def _naming_context(state: ToolState, entry: ResultEntry, path: str) -> _NamingContext:
    """The context of `namings` at `path` (cached on the entry per `user_version`)."""
    tag = ("n", path)
    version = state.user_version
    cached = entry.cache.get(tag)
    if cached is not None and cached.version == version:
        return cached
    prefix = list_prefix(path)
    hits = element_hits(state, entry, prefix) if prefix is not None and version else {}
    where = addresses(entry, path) if hits else {}
    depth = prefix.count(LIST_MARK) if prefix else 0
    said = written(state, entry) if version else ()
    context = entry.cache[tag] = _NamingContext(version, hits, where, depth, said, {})
    return context


def _naming_of(state: ToolState, context: _NamingContext, key: str) -> NamingAt:
    """The naming of the candidates with this key (`namings`), computed once per context."""
    got = context.asked.get(key)
    if got is None:
        direct = _latest(state, key, whole=False) if key in context.said and len(key) >= 3 else None
        words: dict[str, tuple[int, int]] = {}
        hits, depth = context.hits, context.depth
        for address in context.where.get(key, ()):
            words.update(hits.get(address[:depth], {}))
        got = context.asked[key] = (direct, words)
    return got


@dataclass(slots=True)
class Named:
    """Which candidates at one path of one result the user named (some are)."""

    flags: list[bool]
    """Per candidate: named (the value itself or a word of its record)."""
    named: list[int]
    """The indexes flagged, ascending."""
    keys: frozenset[str]
    """Their keys."""


def named_view(state: ToolState, entry: ResultEntry, path: str) -> Named | None:
    """`mention_flags` with the named indexes and keys, or None when the user named none.

    Cached on the entry per `user_version`, and the same object while the named keys stay the same
    (a path where nothing is named keeps only the version: most paths, in a served session).
    """
    views = entry.cache  # by the path itself: a path starts with `$`, no other key of the cache does
    got = views.get(path)
    if type(got) is int:
        if got == state.user_version:
            return None
        got = (got, _NO_KEYS, None)
    elif got is not None and got[0] == state.user_version:
        return got[2]
    # The user wrote none of the entry's values nor tokens: nothing of it is named (as `_named_keys` finds).
    said = written(state, entry) if state.user_version else None
    cands = candidates(entry, path) if said or (said is not None and tokens_said(state, entry)) else None
    keys = _named_keys(state, entry, path, cands, said) if cands is not None else _NO_KEYS  # type: ignore[arg-type]
    if got is not None and got[1] == keys:
        view = got[2]
    elif keys:
        flags = [k in keys for k in cands.keys]
        named = [i for i, flag in enumerate(flags) if flag]
        flagged = frozenset(cands.keys[i] for i in named)
        # Most often the keys named are the keys flagged: one set kept for both, not two.
        view = Named(flags, named, keys if flagged == keys else flagged) if named else None
    else:
        view = None
    views[path] = (state.user_version, keys, view) if keys else state.user_version
    return view


_NO_KEYS: frozenset[str] = frozenset()


def _named_keys(state: ToolState, entry: ResultEntry, path: str, cands: Candidates, said: set[str]) -> frozenset[str]:
    """The values at `path` the user named (as `namings`: a value they wrote, of 3 characters or
    more, or one whose record holds a word they wrote; `said` is `written`, every value of it that
    long). A record's value may equal a candidate without being it (1 and True): `named_view`
    flags the candidates themselves."""
    first = cands.first
    if len(first) < len(said):  # the same set, walking the smaller side
        keys = {k for k in first if k in said}
    else:
        keys = {k for k in said if k in first}
    prefix = list_prefix(path)
    if prefix is not None:
        hits = element_hits(state, entry, prefix, said)
        if hits:
            by_element = _keys_by_element(entry, path, prefix)
            for element in hits:
                keys.update(by_element.get(element, ()))
    return frozenset(keys)


def _keys_by_element(entry: ResultEntry, path: str, prefix: str) -> dict[tuple[int, ...], tuple[str, ...]]:
    """Element of the list at `prefix` -> the candidates at `path` in it (cached with its index)."""
    tag = ("ke", path)
    views = entry.index_views
    got = views.get(tag)
    if got is None:
        by_element: dict[tuple[int, ...], list[str]] = {}
        depth = prefix.count(LIST_MARK)
        for key, places in addresses(entry, path).items():
            for address in places:
                by_element.setdefault(address[:depth], []).append(key)
        got = views[tag] = _frozen(by_element)  # type: ignore[arg-type]
    return got


def mention_flags(state: ToolState, entry: ResultEntry, path: str) -> list[bool]:
    """For each candidate at `path`, whether the user named it (the value or a record word)."""
    view = named_view(state, entry, path)
    return [False] * len(keys_at(entry, path)) if view is None else list(view.flags)


def clearest(state: ToolState, pool: list[ResultEntry], path: str,
             open_: list[tuple[ResultEntry, list[int]]],
             views: list[Named | None] | None = None) -> tuple[ResultEntry, int] | None:
    """Among open candidates (per result of the pool), the one the user named most clearly.
    `views`: each open result's `named_view` at the path, when the caller has them.

    Namings are read only where several candidates are named, and only theirs (`_naming_of`)."""
    if not state.user_version:
        return None
    named: list[tuple[ResultEntry, int]] = []
    for at, (entry, indexes) in enumerate(open_):
        view = named_view(state, entry, path) if views is None else views[at]
        if view is None:
            continue
        flags = view.flags
        for i in (view.named if len(indexes) == len(flags) else indexes):  # every candidate open, or some
            if flags[i]:
                named.append((entry, i))
    if not named:
        return None
    if len(named) == 1:
        return named[0]
    df = _document_frequency(state, pool, path)
    best: tuple[ResultEntry, int] | None = None
    best_rank: tuple[float, int, int] | None = None
    context: _NamingContext | None = None
    context_of: ResultEntry | None = None
    for entry, i in named:
        if entry is not context_of:
            context, context_of = _naming_context(state, entry, path), entry
        direct, words = _naming_of(state, context, keys_at(entry, path)[i])  # type: ignore[arg-type]
        # Naming(strength, message, position).rank(), without the objects
        rank = (1.0, direct[0], -direct[1]) if direct is not None else None
        for w, (m, p) in words.items():
            cand = (1.0 / max(1, df.get(w, 1)), m, -p)
            if rank is None or cand > rank:
                rank = cand
        if rank is None:  # never: a candidate named is written, or a word of its record is
            continue
        if best_rank is None or rank > best_rank:
            best, best_rank = (entry, i), rank
    return best


def _document_frequency(state: ToolState, pool: list[ResultEntry], path: str) -> dict[str, int]:
    """Record word -> elements of the pool's lists at the path's prefix whose hits include it
    (cached on the pool's newest result per `user_version`)."""
    prefix = list_prefix(path)
    if prefix is None:
        return {}
    tag = ("df", prefix, len(pool), pool[-1].position)
    cached = pool[0].cache.get(tag)
    if cached is not None and cached[0] == state.user_version:
        return cached[1]
    df: dict[str, int] = {}
    pool[0].cache[tag] = (state.user_version, df)
    for entry in pool:
        for words in element_hits(state, entry, prefix).values():
            for w in words:
                df[w] = df.get(w, 0) + 1
    return df
