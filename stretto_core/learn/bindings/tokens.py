"""Record tokens: a distinguishing word of a record's multi-word name names the record.

A record word (`mention.record_words`) is a whole string value of an element of a list. Users
seldom write a record's whole name: in τ² retail they say "the helmet" for `Cycling Helmet`,
"the camera" for `Digital Camera`, "the jigsaw" for `Jigsaw Puzzle`, and a whole-value rule
reads none of those as named. So a record also has tokens:

    tokens of a value   the words (runs of letters and digits) of a string value written with a
                        space or a hyphen, of 2 to
                        `MAX_NAME_WORDS` words and at most `MAX_NAME_CHARS` characters (a name,
                        not a text), each ≥ `MIN_RECORD_WORD` characters with a letter, not a
                        common word (`COMMON_WORDS`)
    tokens of an element  the tokens of its own fields' values (`.name`, not `.options.size`:
                        an option describes a variant, not which record is meant), less those
                        another element of the list holds too, as a token or a word of any
                        own field's value (an email's, a file name's): "smart" of `Smart
                        Watch` beside `Smart Thermostat` tells neither apart, and a word all
                        records share names none of them

A token names its elements when the user wrote it as a whole word; how clearly is weighed by its
frequency over the pool's elements, as a record word's is (`mention.clearest`). Learning and
serving read the same tables (kept with a result's index, which a served result's focused index
holds at its focus paths too).
"""

from __future__ import annotations

import re
from typing import Iterable

from stretto_core.sessions.focus import LIST_MARK
from stretto_core.sessions.state import ResultEntry, ToolState
from stretto_core.sessions.value_written import find_word

MIN_RECORD_WORD = 4
"""Record words and tokens shorter than this are not checked against the user's words (`mention`
reads it from here)."""

MAX_NAME_WORDS = 5
"""A value of more words than this is a text (a message, a review), not a name: its words name nothing."""

MAX_NAME_CHARS = 60
"""A value longer than this is a text, not a name."""

COMMON_WORDS = frozenset("""
    about above after again also away back been before being below between both came come could
    does done down each even ever every from have here into just like made make many more most
    much must never only other over same should since some such than that their them then there
    these they this those through under until upon very want well were what when where which
    while will with would your yours edition series version model type style item items
    """.split())
"""Words of four letters or more that say nothing of which record is meant."""

_WORD = re.compile(r"[^\W_]+")

_NO_TOKENS: dict[str, tuple[str, ...]] = {}


def value_tokens(key: str) -> list[str]:
    """The tokens of one normalized string value written with a space or a hyphen, a name
    (module docstring); none for a single word."""
    if " " not in key and "-" not in key:
        return []
    return value_words(key)


def value_words(key: str) -> list[str]:
    """The words of one normalized string value as tokens are cut, whatever separates them (an
    email's, a file name's): what tells an element's tokens apart from its siblings'."""
    if len(key) > MAX_NAME_CHARS or key.isalnum():
        return []
    words = _WORD.findall(key)
    if not 2 <= len(words) <= MAX_NAME_WORDS:
        return []
    return [w for w in words if len(w) >= MIN_RECORD_WORD and not w.isdigit() and w not in COMMON_WORDS
            and any(c.isalpha() for c in w)]


def entry_tokens(entry: ResultEntry) -> dict[str, tuple[str, ...]]:
    """Token -> the paths (an own field of a list's elements) whose values hold it, for the whole
    result (kept with its index)."""
    views = entry.index_views
    got = views.get("tokens")
    if got is None:
        found: dict[str, dict[str, None]] = {}
        for path, pairs in entry.index.records.items():
            cut = path.rfind(LIST_MARK)
            if cut < 0 or not _own_field(path, cut + len(LIST_MARK)):
                continue
            for _, value in pairs:
                if type(value) is str and (" " in value or "-" in value):
                    for token in value_tokens(value.strip().casefold()):  # `normalize` of a string
                        found.setdefault(token, {})[path] = None
        got = views["tokens"] = {t: tuple(paths) for t, paths in found.items()} if found else _NO_TOKENS
    return got


def record_tokens(entry: ResultEntry, prefix: str) -> dict[tuple[int, ...], list[str]]:
    """Element address -> the distinguishing tokens of that element of the list at `prefix`."""
    if not entry_tokens(entry):
        return {}
    depth = prefix.count(LIST_MARK)
    tokens: dict[tuple[int, ...], set[str]] = {}
    words: dict[tuple[int, ...], set[str]] = {}
    for path, pairs in entry.index.records.items():
        if not path.startswith(prefix) or not _own_field(path, len(prefix)):
            continue
        for address, value in pairs:
            if type(value) is str and not value.isalnum():
                key = value.strip().casefold()  # `normalize` of a string
                found = value_words(key)
                if found:
                    element = address[:depth]
                    words.setdefault(element, set()).update(found)
                    if " " in key or "-" in key:
                        tokens.setdefault(element, set()).update(found)
    holders: dict[str, int] = {}
    for held in words.values():
        for word in held:
            holders[word] = holders.get(word, 0) + 1
    out = {element: sorted(t for t in held if holders[t] == 1) for element, held in tokens.items()}
    return {element: held for element, held in out.items() if held}


def _own_field(path: str, start: int) -> bool:
    """`path[start:]` is one field of the element itself (`.name`), not of a record inside it
    (`.options.size`: an option's words describe a variant, not which record is meant)."""
    rest = path[start:]
    return rest.startswith(".") and "." not in rest[1:] and LIST_MARK not in rest and not rest.endswith("*~")


def token_elements(entry: ResultEntry, prefix: str) -> dict[str, tuple[tuple[int, ...], ...]]:
    """Token of the list at `prefix` -> the elements whose tokens it is (kept with the index)."""
    views = entry.index_views
    tag = ("te", prefix)
    got = views.get(tag)
    if got is None:
        elements: dict[str, list[tuple[int, ...]]] = {}
        for element, tokens in record_tokens(entry, prefix).items():
            for token in tokens:
                elements.setdefault(token, []).append(element)
        got = views[tag] = {t: tuple(e) for t, e in elements.items()}
    return got


def tokens_said(state: ToolState, entry: ResultEntry) -> frozenset[str] | set[str]:
    """The result's tokens the user wrote as whole words (do not modify; cached on the entry and
    brought up to date with the messages since: messages are only ever appended)."""
    user = state.user
    count = user.count
    got = entry.cache.get("tsaid")
    if got is not None and got[0] == count:
        return got[1]
    tokens = entry_tokens(entry)
    seen, found = (0, _NONE) if got is None else got
    if tokens and count:
        if seen <= user.dropped:
            new: Iterable[str] = [t for t in tokens if t not in found and user.in_text(t)
                                  and user.latest(t, True) is not None]
        else:  # a message's edge is a line break, so a whole word of the joined text is one of a message
            joined = "\n".join(user.since(seen))
            new = [t for t in tokens if t not in found and t in joined and find_word(joined, t) >= 0]
        if new:
            found = set(found) | set(new)
    entry.cache["tsaid"] = (count, found)
    return found


_NONE: frozenset[str] = frozenset()
