"""What the user said, kept ready for mention checks whose cost does not grow with the session.

A binding asks two questions of the user's words: does a value occur in some message
(case-insensitive substring), and which is the latest message holding a word (and where).
Asked naively, each is a scan of everything the user said, once per candidate value of every
new result: a decision then slows down as the session grows.

`UserText` answers both exactly, with

- a trigram filter, once the user said more than `FILTER_FROM` characters: one bit per hashed
  three-character piece of any message. A value with a piece no message has is in no message
  (most values of a result are in none), so only values that pass the filter are searched for;
  the filter grows with the text and keeps about one bit in eight set, so a value of 10
  characters passes it falsely about once in 10⁷;
- a cache of `latest` answers, brought up to date by reading only the messages since.

A served session may keep only the newest `limit` characters (whole messages; `None` keeps all):
messages keep their numbers (`count`, `dropped`), so what was cached by number stays right.
"""

from __future__ import annotations

from typing import Iterator

GRAM = 3
"""Length of the pieces the filter holds: the shortest value a mention check looks for."""

FILTER_FROM = 2048
"""Below this many characters a search of the text itself is quicker than the filter."""

MIN_FILTER_BITS = 1 << 14
"""The filter's smallest size (2 KiB)."""

LATEST_CACHE = 4096
"""At most this many words' latest places are cached (then the cache starts afresh)."""


def find_word(text: str, word: str) -> int:
    """The first place `word` occurs in `text` as a whole word (not inside a longer one), or -1."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return start
        start = text.find(word, start + 1)
    return -1


class UserText:
    """The user's messages (case-folded), numbered from 0 in the order said."""

    __slots__ = ("messages", "dropped", "text", "limit", "_chars", "_bits", "_mask", "_grams", "_latest")

    def __init__(self, limit: int | None = None) -> None:
        self.messages: list[str] = []
        """The messages kept, oldest first (`messages[i]` is message number `dropped + i`)."""
        self.dropped = 0
        """Messages dropped from the front to keep within `limit`."""
        self.text = ""
        """The messages kept, one a line."""
        self.limit = limit
        self._chars = 0
        self._bits: bytearray | None = None
        self._mask = 0
        self._grams = 0
        self._latest: dict[tuple[str, bool], tuple[int, tuple[int, int] | None]] = {}

    @property
    def count(self) -> int:
        """Messages said so far (kept or dropped)."""
        return self.dropped + len(self.messages)

    def add(self, text: str) -> None:
        """One more message (already case-folded)."""
        self.messages.append(text)
        self.text = text if len(self.messages) == 1 else self.text + "\n" + text
        self._chars += len(text) + 1
        if self.limit is not None and self._chars > self.limit and len(self.messages) > 1:
            self._drop()
            return
        self._remember(text)

    def since(self, number: int) -> list[str]:
        """The kept messages numbered `number` and later."""
        return self.messages[max(0, number - self.dropped):]

    def maybe(self, key: str) -> bool:
        """False when `key` (without a line break) is surely in no message; True when it may be."""
        bits = self._bits
        if bits is None or len(key) < GRAM:
            return True
        mask = self._mask
        for i in range(len(key) - GRAM + 1):
            h = hash(key[i:i + GRAM]) & mask
            if not bits[h >> 3] & (1 << (h & 7)):
                return False
        return True

    def contains(self, key: str) -> bool:
        """Some kept message holds `key` (a substring)."""
        if "\n" in key:
            return any(key in message for message in self.messages)
        return self.maybe(key) and key in self.text

    def in_text(self, key: str) -> bool:
        """`key` is a substring of `text` (the kept messages one a line; it may span two)."""
        if "\n" in key:
            return key in self.text
        return self.maybe(key) and key in self.text

    def latest(self, word: str, whole: bool) -> tuple[int, int] | None:
        """(message number, position) of the latest message holding `word` (as a whole word when
        `whole`), or None."""
        tag = (word, whole)
        count = self.count
        cached = self._latest.get(tag)
        if cached is not None and cached[0] == count:
            return cached[1]
        if cached is None or (cached[1] is not None and cached[1][0] < self.dropped):
            found = self._search(word, whole, self.dropped)
        else:  # only the messages since can hold a later place
            found = self._search(word, whole, cached[0])
            if found is None:
                found = cached[1]
        if len(self._latest) >= LATEST_CACHE:
            self._latest.clear()
        self._latest[tag] = (count, found)
        return found

    def _search(self, word: str, whole: bool, first: int) -> tuple[int, int] | None:
        """The latest place of `word` among the messages numbered `first` and later."""
        if not self.contains(word):
            return None
        for number, message in self._newest_first(first):
            pos = find_word(message, word) if whole else message.find(word)
            if pos >= 0:
                return number, pos
        return None

    def _newest_first(self, first: int) -> Iterator[tuple[int, str]]:
        base = self.dropped
        for i in range(len(self.messages) - 1, max(0, first - base) - 1, -1):
            yield base + i, self.messages[i]

    # -- the filter ------------------------------------------------------------------------------
    def _remember(self, text: str) -> None:
        self._grams += max(0, len(text) - GRAM + 1)
        if self._bits is None:
            if len(self.text) >= FILTER_FROM:
                self._rebuild()
        elif self._grams * 8 > self._mask + 1:
            self._rebuild()
        else:
            self._set(text)

    def _set(self, text: str) -> None:
        bits, mask = self._bits, self._mask
        assert bits is not None
        for i in range(len(text) - GRAM + 1):
            h = hash(text[i:i + GRAM]) & mask
            bits[h >> 3] |= 1 << (h & 7)

    def _rebuild(self) -> None:
        size = MIN_FILTER_BITS
        while size < self._grams * 8:
            size *= 2
        self._bits = bytearray(size // 8)
        self._mask = size - 1
        for message in self.messages:
            self._set(message)

    def _drop(self) -> None:
        """Drop the oldest messages until the kept text is at most half the limit (the newest
        message always stays), then refill the filter from what is kept."""
        assert self.limit is not None
        while len(self.messages) > 1 and self._chars > self.limit // 2:
            gone = self.messages.pop(0)
            self._chars -= len(gone) + 1
            self.dropped += 1
        self.text = "\n".join(self.messages)
        self._grams = sum(max(0, len(m) - GRAM + 1) for m in self.messages)
        if len(self.text) >= FILTER_FROM:
            self._rebuild()
        else:
            self._bits = None
