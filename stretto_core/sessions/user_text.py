"""What the user said, kept ready for mention checks whose cost does not grow with the session.

A binding asks two questions of the user's words: does a value occur in some message
(case-insensitive substring), and which is the latest message holding a word (and where).
Asked naively, each is a scan of everything the user said, once per candidate value of every
new result: a decision then slows down as the session grows.

`UserText` answers both exactly, with

- a trigram filter, once the user said more than `FILTER_FROM` characters: one bit per hashed
  three-character piece of any message. A value with a piece no message has is in no message
  (most values of a result are in none), so only values that pass the filter are searched for;
  the filter grows with the text and keeps at most a quarter of its bits set (about one in
  sixteen after it grows), so a value of 6 characters passes it falsely at most once in 250;
- a cache of `latest` answers, brought up to date by reading only the messages since.

A served session forgets its cached `latest` answers at each message (they are asked again
within one message's decisions; afresh, a word's latest place costs one search of the kept text,
backwards, which the filter mostly spares: an idle session then holds no table of them).

A served session may keep only the newest `limit` characters (whole messages; `None` keeps all):
messages keep their numbers (`count`, `dropped`), so what was cached by number stays right.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterable, Iterator

from stretto_core.sessions.value_written import bare, find_word, whole_at

GRAM = 3
"""Length of the pieces the filter holds: the shortest value a mention check looks for."""

FILTER_FROM = 2048
"""Below this many characters a search of the text itself is quicker than the filter."""

MIN_FILTER_BITS = 1 << 14
"""The filter's smallest size (2 KiB)."""

LATEST_CACHE = 1024
"""At most this many words' latest places are cached (then the cache starts afresh)."""

FOUND_FROM = 16 * 1024
"""Once the text is this long, `contains` remembers per value where it found it (or up to which
message it did not), so a value asked again costs a search of the messages since, not of all."""

FOUND_CACHE = 1024
"""At most this many values' answers are remembered (the ones asked longest ago are forgotten)."""

HELD_CACHE = 16384
"""A full state's `holding` remembers at most this many values' answers (then it starts afresh)."""


class UserText:
    """The user's messages (case-folded), numbered from 0 in the order said."""

    __slots__ = ("_starts", "dropped", "text", "limit", "filter_from", "_bits", "_mask", "_grams", "_latest",
                 "_found", "_held")

    def __init__(self, limit: int | None = None, filter_from: int = FILTER_FROM) -> None:
        self._starts: list[int] = []
        """Where each kept message starts in `text` (they are kept once, there)."""
        self.dropped = 0
        """Messages dropped from the front to keep within `limit`."""
        self.text = ""
        """The messages kept, one a line."""
        self.limit = limit
        self.filter_from = filter_from
        """The filter is built once the text is this long (`FILTER_FROM`)."""
        self._bits: bytearray | None = None
        self._mask = 0
        self._grams = 0
        self._latest: dict[tuple[str, bool], tuple[int, tuple[int, int] | None]] = {}
        self._found: dict[str, tuple[int, int]] | None = None
        """Value -> (messages said when it was last searched for, the number of a message holding
        it or -1: none of those did), once the text is `FOUND_FROM` long."""
        self._held: dict[str, tuple[int, bool]] = {}
        """Value -> (messages said when `holding` last asked, whether one of them writes it), in a
        full state (`limit` None: none is ever dropped)."""

    @property
    def count(self) -> int:
        """Messages said so far (kept or dropped)."""
        return self.dropped + len(self._starts)

    @property
    def messages(self) -> list[str]:
        """The messages kept, oldest first (`messages[i]` is message number `dropped + i`)."""
        return [self._message(i) for i in range(len(self._starts))]

    def _message(self, i: int) -> str:
        starts = self._starts
        end = starts[i + 1] - 1 if i + 1 < len(starts) else len(self.text)
        return self.text[starts[i]:end]

    def add(self, text: str) -> None:
        """One more message (already case-folded)."""
        if self._starts:
            self._starts.append(len(self.text) + 1)
            self.text = self.text + "\n" + text
        else:
            self._starts.append(0)
            self.text = text
        if self.limit is not None and self._latest:  # a served text: its `latest` answers are stale (module docstring)
            self._latest = {}
        if self.limit is not None and len(self.text) > self.limit and len(self._starts) > 1:
            self._drop()
            return
        self._remember(text)

    def since(self, number: int) -> list[str]:
        """The kept messages numbered `number` and later."""
        return [self._message(i) for i in range(max(0, number - self.dropped), len(self._starts))]

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
        if len(self.text) < FOUND_FROM:
            return self.maybe(key) and key in self.text
        found = self._found
        if found is None:
            found = self._found = {}
        count, dropped = self.count, self.dropped
        got = found.pop(key, None)  # asked again: it goes to the back of the queue
        if got is None and len(found) >= FOUND_CACHE:
            del found[next(iter(found))]
        if got is not None:
            said, where = got
            if where >= dropped:  # a message holding it is still kept
                found[key] = got
                return True
            if where < 0 and said >= dropped:  # none of the messages up to `said` did: read those since
                if said >= count:
                    found[key] = got
                    return False
                at = self.text.find(key, self._starts[said - dropped])
                found[key] = (count, -1 if at < 0 else self._number_at(at))
                return at >= 0
        at = self.text.find(key) if self.maybe(key) else -1
        found[key] = (count, -1 if at < 0 else self._number_at(at))
        return at >= 0

    def _number_at(self, at: int) -> int:
        """The number of the kept message that holds the text's place `at`."""
        return self.dropped + bisect_right(self._starts, at) - 1

    def wrote(self, key: str) -> bool:
        """Some kept message writes the value `key` (`contains` it, or its rest after a sigil as a
        whole word: `value_written`)."""
        return self.contains(key) or (not key[:1].isalnum() and self._wrote_bare(key))

    def _wrote_bare(self, key: str) -> bool:
        rest = bare(key)
        return rest is not None and self.latest(rest, True) is not None

    def holding(self, keys: Iterable[str], shortest: int = 0) -> list[str]:
        """The keys of at least `shortest` characters that some kept message writes (`wrote` of
        each); without a filter, one search of the text each (and one more for a sigil's), in a
        full state at most once a message (`_holding_kept`)."""
        if self._bits is None:
            wanted = keys if shortest <= 0 else [k for k in keys if len(k) >= shortest]
            if self.limit is None:  # a full state's (a served one keeps no answers: its memory stays small)
                return self._holding_kept(wanted)
            text, contains, bare_ = self.text, self.contains, self._wrote_bare
            return [k for k in wanted
                    if (k in text and ("\n" not in k or contains(k))) or (not k[0].isalnum() and bare_(k))]
        wrote = self.wrote
        return [k for k in keys if len(k) >= shortest and wrote(k)]

    def _holding_kept(self, keys: Iterable[str]) -> list[str]:
        """`holding` without the filter, for a full state (all its messages kept). The results of
        a session share many values, so each value's answer is kept (`_held`): asked again after
        no new message, it is the same; after new ones, a value written stays written, and one
        that was not is written only if the new messages hold it (a value without a line break
        never spans two messages)."""
        text, contains, bare_ = self.text, self.contains, self._wrote_bare
        held, count = self._held, self.count
        if len(held) >= HELD_CACHE:
            held.clear()
        tails: dict[int, str] = {}
        out = []
        for k in keys:
            got = held.get(k)
            if got is not None and got[0] == count:
                found = got[1]
            elif got is not None and got[1]:
                found = True
            elif got is None or "\n" in k or not k[0].isalnum():
                found = (k in text and ("\n" not in k or contains(k))) or (not k[0].isalnum() and bare_(k))
            else:  # not written in the messages up to got[0]: is it in those since?
                tail = tails.get(got[0])
                if tail is None:
                    tail = tails[got[0]] = text[self._starts[got[0]]:]
                found = k in tail
            if got is None or got[0] != count:
                held[k] = (count, found)
            if found:
                out.append(k)
        return out

    def in_text(self, key: str) -> bool:
        """`key` is a substring of `text` (the kept messages one a line; it may span two)."""
        if "\n" in key:
            return key in self.text
        return self.maybe(key) and key in self.text

    def latest_written(self, key: str, whole: bool) -> tuple[int, int] | None:
        """`latest(key, whole)`, or where the key's rest after a sigil stands as a whole word
        (`value_written`), whichever message is newer (the earlier place in one message)."""
        found = self.latest(key, whole)
        rest = bare(key) if not key[:1].isalnum() else None
        if rest is None:
            return found
        other = self.latest(rest, True)
        if found is None or (other is not None and (other[0], -other[1]) > (found[0], -found[1])):
            return other
        return found

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
        """The latest place of `word` among the messages numbered `first` and later: the last
        occurrence in the text that lies in one message (and is a whole word there, when `whole`),
        found by searching the text backwards at once, not message by message."""
        if first <= self.dropped and "\n" not in word and not self.maybe(word):  # all of them: ask the filter first
            return None  # (no search of the text for it too: the search below is one)
        if not word:
            return next(((number, 0) for number, _ in self._newest_first(first)), None)
        text, starts, size = self.text, self._starts, len(word)
        oldest = max(0, first - self.dropped)
        if oldest >= len(starts):
            return None
        low, high = starts[oldest], len(text)
        while True:
            at = text.rfind(word, low, high)
            if at < 0:
                return None
            i = bisect_right(starts, at) - 1
            end = starts[i + 1] - 1 if i + 1 < len(starts) else len(text)
            if at + size <= end and (not whole or whole_at(text, at, at + size)):
                message = text[starts[i]:end]
                return self.dropped + i, find_word(message, word) if whole else message.find(word)
            high = at + size - 1  # an occurrence across two messages, or inside a longer word

    def _newest_first(self, first: int) -> Iterator[tuple[int, str]]:
        base = self.dropped
        for i in range(len(self._starts) - 1, max(0, first - base) - 1, -1):
            yield base + i, self._message(i)

    # -- the filter ------------------------------------------------------------------------------
    def _remember(self, text: str) -> None:
        if self._bits is None:
            if len(self.text) >= self.filter_from:
                self._rebuild()
            return
        self._grams += self._set(_pieces(text))
        if self._grams * 4 > self._mask + 1:  # over a quarter of the bits set: grow
            self._rebuild()

    def _set(self, pieces: set[int]) -> int:
        """Set the bits of hashed pieces; returns how many were not set yet."""
        bits, mask = self._bits, self._mask
        assert bits is not None
        new = 0
        for h in pieces:
            h &= mask
            byte, bit = h >> 3, 1 << (h & 7)
            if not bits[byte] & bit:
                bits[byte] |= bit
                new += 1
        return new

    def _rebuild(self) -> None:
        pieces = _pieces(self.text)  # pieces across a line break too: more bits set, never fewer
        size = MIN_FILTER_BITS
        while size < len(pieces) * 16:  # about one bit in sixteen set, room to grow fourfold
            size *= 2
        self._bits = bytearray(size // 8)
        self._mask = size - 1
        self._grams = self._set(pieces)

    def _drop(self) -> None:
        """Drop the oldest messages until the kept text is at most half the limit (the newest
        message always stays), then refill the filter from what is kept."""
        assert self.limit is not None
        starts, keep = self._starts, 0
        while keep < len(starts) - 1 and len(self.text) - starts[keep] > self.limit // 2:
            keep += 1
        cut = starts[keep]
        self.text = self.text[cut:]
        self._starts = [start - cut for start in starts[keep:]]
        self.dropped += keep
        if len(self.text) >= self.filter_from:
            self._rebuild()
        else:
            self._bits = None


def _pieces(text: str) -> set[int]:
    """The hashes of every three-character piece of `text`."""
    return {hash(text[i:i + GRAM]) for i in range(len(text) - GRAM + 1)}
