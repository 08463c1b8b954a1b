"""Which candidates the user named, and which of them most clearly.

A candidate value at a source path is named by the user when

- they wrote the value itself (case-insensitive substring, ≥ 3 characters, as
  `ToolState.mentioned`), or
- they wrote, as whole words, a word of its record: a string of ≥ `MIN_RECORD_WORD`
  characters with a letter held in the same element of the source's list (`$.items[*]` for
  `$.items[*].product_id`: the item's name, its options) and not held by every element of that
  list in that result (words all records share name none of them).

When several open candidates are named, the binding takes the one named most clearly:

    strength(x) = 1                          x itself was written
                = max over its words w of 1 / df(w)
    df(w)       = elements, over the results of the source's pool, whose words include w

so a word one record holds ("laptop") outranks one many hold ("black"). Ties go to the latest
user message, then to the earliest place in it (users list what they want in the order they
want it), then to the newest result and document order.
"""

from __future__ import annotations

from dataclasses import dataclass

from stretto_core.state import ResultEntry, ToolState
from stretto_core.values import normalize

MIN_RECORD_WORD = 4
"""Record words shorter than this are not checked against the user's words."""

LIST_MARK = "[*]"


@dataclass(frozen=True)
class Naming:
    """How clearly the user named one candidate (bigger is clearer)."""

    strength: float
    message: int
    position: int

    def rank(self) -> tuple[float, int, int]:
        return (self.strength, self.message, -self.position)


def list_prefix(path: str) -> str | None:
    """The path of the list a value's record belongs to (`$.flights[*]`), or None."""
    cut = path.rfind(LIST_MARK)
    return None if cut < 0 else path[:cut + len(LIST_MARK)]


def keys_at(entry: ResultEntry, path: str) -> list[str]:
    """The normalized candidates at `path` (as `entry.index.by_path[path]`, "" for none)."""
    cache = entry.cache
    got = cache.get(("k", path))
    if got is None:
        got = cache[("k", path)] = [normalize(v) or "" for v in entry.index.by_path.get(path, ())]
    return got


def addresses(entry: ResultEntry, path: str) -> dict[str, list[tuple[int, ...]]]:
    """Normalized value -> its addresses at `path`, in document order."""
    got = entry.cache.get(("a", path))
    if got is None:
        got = {}
        for address, value in entry.index.records.get(path, ()):
            got.setdefault(normalize(value) or "", []).append(address)
        entry.cache[("a", path)] = got
    return got


def record_words(entry: ResultEntry, prefix: str) -> dict[tuple[int, ...], list[str]]:
    """Element address -> the distinguishing words of that element of the list at `prefix`."""
    got = entry.cache.get(("w", prefix))
    if got is not None:
        return got
    depth = prefix.count(LIST_MARK)
    words: dict[tuple[int, ...], set[str]] = {}
    for path, pairs in entry.index.records.items():
        if not path.startswith(prefix) or path.endswith("*~"):
            continue
        for address, value in pairs:
            if isinstance(value, str) and len(value) >= MIN_RECORD_WORD and any(c.isalpha() for c in value):
                words.setdefault(address[:depth], set()).add(normalize(value) or "")
    shared = set.intersection(*words.values()) if len(words) > 1 else set()
    got = {addr: sorted(ws - shared) for addr, ws in words.items()}
    entry.cache[("w", prefix)] = got
    return got


def _find_word(text: str, word: str) -> int:
    """The first place `word` occurs in `text` as a whole word (not inside a longer one), or -1."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return start
        start = text.find(word, start + 1)
    return -1


def _latest(state: ToolState, word: str, whole: bool) -> tuple[int, int] | None:
    """(message, position) of the latest user message holding `word`, or None."""
    if word not in state.user_text():
        return None
    for m in range(len(state.user_words) - 1, -1, -1):
        text = state.user_words[m]
        pos = _find_word(text, word) if whole else text.find(word)
        if pos >= 0:
            return m, pos
    return None


def element_hits(state: ToolState, entry: ResultEntry, prefix: str) -> dict[tuple[int, ...], dict[str, tuple[int, int]]]:
    """Element address -> its record words the user wrote, each with where (message, position)."""
    tag = ("h", prefix)
    cached = entry.cache.get(tag)
    if cached is not None and cached[0] == state.user_version:
        return cached[1]
    hits: dict[tuple[int, ...], dict[str, tuple[int, int]]] = {}
    if state.user_version:
        for element, words in record_words(entry, prefix).items():
            for word in words:
                where = _latest(state, word, whole=True)
                if where is not None:
                    hits.setdefault(element, {})[word] = where
    entry.cache[tag] = (state.user_version, hits)
    return hits


def namings(state: ToolState, entry: ResultEntry, path: str) -> list[tuple[tuple[int, int] | None, dict[str, tuple[int, int]]]]:
    """For each candidate at `path`: where the user wrote the value itself, and its record words they wrote."""
    tag = ("n", path)
    cached = entry.cache.get(tag)
    if cached is not None and cached[0] == state.user_version:
        return cached[1]
    keys = keys_at(entry, path)
    out: list[tuple[tuple[int, int] | None, dict[str, tuple[int, int]]]] = []
    prefix = list_prefix(path)
    hits = element_hits(state, entry, prefix) if prefix is not None and state.user_version else {}
    where = addresses(entry, path) if hits else {}
    depth = prefix.count(LIST_MARK) if prefix else 0
    for key in keys:
        direct = _latest(state, key, whole=False) if state.user_version and len(key) >= 3 else None
        words: dict[str, tuple[int, int]] = {}
        for address in where.get(key, ()):
            words.update(hits.get(address[:depth], {}))
        out.append((direct, words))
    entry.cache[tag] = (state.user_version, out)
    return out


def mention_flags(state: ToolState, entry: ResultEntry, path: str) -> list[bool]:
    """For each candidate at `path`, whether the user named it (the value or a record word)."""
    return [direct is not None or bool(words) for direct, words in namings(state, entry, path)]


def clearest(state: ToolState, pool: list[ResultEntry], path: str,
             open_: list[tuple[ResultEntry, list[int]]]) -> tuple[ResultEntry, int] | None:
    """Among open candidates (per result of the pool), the one the user named most clearly."""
    if not state.user_version:
        return None
    named: list[tuple[ResultEntry, int, tuple[int, int] | None, dict[str, tuple[int, int]]]] = []
    for entry, indexes in open_:
        found = namings(state, entry, path)
        for i in indexes:
            direct, words = found[i]
            if direct is not None or words:
                named.append((entry, i, direct, words))
    if not named:
        return None
    if len(named) == 1:
        return named[0][0], named[0][1]
    df = _document_frequency(state, pool, path)
    best: tuple[ResultEntry, int] | None = None
    best_rank: tuple[float, int, int] | None = None
    for entry, i, direct, words in named:
        options = [Naming(1.0, *direct)] if direct is not None else []
        options += [Naming(1.0 / max(1, df.get(w, 1)), m, p) for w, (m, p) in words.items()]
        rank = max(o.rank() for o in options)
        if best_rank is None or rank > best_rank:
            best, best_rank = (entry, i), rank
    return best


def _document_frequency(state: ToolState, pool: list[ResultEntry], path: str) -> dict[str, int]:
    prefix = list_prefix(path)
    df: dict[str, int] = {}
    if prefix is None:
        return df
    for entry in pool:
        for words in element_hits(state, entry, prefix).values():
            for w in words:
                df[w] = df.get(w, 0) + 1
    return df
