"""Whether the user wrote a value: one rule for learning and serving (as `said_words` is for words).

Results mark some ids with a sigil users leave off: τ² retail's orders are `#W2378156` and its
customers write `W2378156` (28 mentions in 18 of its sessions). Asked as a substring, such a
value is never named, so a named order looked unnamed to the mention classes and the class lift.
The rule, over case-folded text and a normalized value `key`:

    key is written where it occurs (a substring, as before), or, when its first character is a
    sigil (neither a letter, a digit nor a space) and the rest is at least `MIN_BARE`
    characters and starts with a letter or digit, where that rest occurs as a whole word

so `w2378156` writes `#w2378156`, `xw2378156` and `w23781567` do not, and `@alice` is written
by `alice,` but not by `malice`. Every question of whether (and where) the user wrote a value
asks it (`UserText.wrote`, `UserText.latest_written`, `written_in`). Cost: a key without a sigil
costs one character test more; one with a sigil, one whole-word search more.
"""

from __future__ import annotations

MIN_BARE = 3
"""The rest of a value after its sigil is at least this long (the shortest value ever named)."""


def bare(key: str) -> str | None:
    """The value without its sigil, when it has one (module docstring); else None."""
    if len(key) > MIN_BARE and not key[0].isalnum() and not key[0].isspace() and key[1].isalnum():
        return key[1:]
    return None


def find_word(text: str, word: str) -> int:
    """The first place `word` occurs in `text` as a whole word (not inside a longer one), or -1."""
    start = text.find(word)
    while start >= 0:
        if whole_at(text, start, start + len(word)):
            return start
        start = text.find(word, start + 1)
    return -1


def whole_at(text: str, start: int, end: int) -> bool:
    """`text[start:end]` is not inside a longer word (a message's edge in `UserText.text` is a
    line break, so this holds there as in the message alone)."""
    return (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum())


def written_in(text: str, key: str) -> bool:
    """`text` writes `key` (module docstring)."""
    if key in text:
        return True
    if key[:1].isalnum():  # no sigil: the common case, decided here
        return False
    rest = bare(key)
    return rest is not None and find_word(text, rest) >= 0
