"""Pseudonymize sessions so they can be shared, and still teach the same flow (paper, Appendix D).

Every value held by fewer than `k` sessions (an order id, an email, a name: what identifies a
customer), and every value under a field the operator names, becomes a keyed hash: HMAC-SHA256
under a key taken from the environment (`STRETTO_REDACT_KEY`), never written anywhere. The same
value becomes the same pseudonym everywhere, in arguments, results, field names and the user's
and the agent's words, so every equality the learner counts (this argument is that result's field,
the user said it) holds in the copy exactly as in the original, and `learn(redact(S))` equals
`learn(S)` once its values are mapped the same way.

A pseudonym keeps its value's shape: each letter a letter of the same case, each digit a digit,
everything else as it was (a number stays a number of as many digits). The learner reads shapes
(an email in the user's words, a name's capital, a constant with a digit), so a pseudonym of
another shape would teach another flow; the hash decides every character, so nothing of the value
but its shape and length remains. Two values that compare equal (`values.normalize`: trimmed,
case-folded) share one pseudonym; two that differ never do (a collision is re-hashed), nor does
a pseudonym ever equal a value that is kept.

Values shorter than `MIN_CHARS` identify no one and are kept: a grep of the copy for a rare value
of that length or more finds none.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from stretto_core.errors import StrettoError
from stretto_core.sessions.model import Lookup, LLMTurn, Session, ToolCall, ToolResult, UserMessage, parse_json_content
from stretto_core.sessions.values import TextResult, leaves_addressed, normalize, parse_result

KEY_ENV = "STRETTO_REDACT_KEY"
"""The environment variable that holds the key; it is never written to any file."""

MIN_KEY_BYTES = 16
"""A key shorter than this is refused: a short key makes pseudonyms easy to reverse."""

DEFAULT_K = 3
"""A value held by fewer sessions than this is hashed (the reference implementation's `--keep-shared 3`)."""

MIN_CHARS = 3
"""Values shorter than this (after trimming) are kept: too short to identify anyone."""

MIN_WORD = 2
"""Of a rare value, the words of this many characters or more are hashed (a lone letter or digit
of it, as in `12 B Main St`, stays: hashing it would rewrite every such letter everywhere)."""

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_DIGITS = "0123456789"


def key_from_env(env: dict[str, str] | None = None) -> bytes:
    """The key in `STRETTO_REDACT_KEY`; a StrettoError when it is missing or too short."""
    value = (os.environ if env is None else env).get(KEY_ENV, "")
    if not value:
        raise StrettoError(f"set {KEY_ENV} to a secret of at least {MIN_KEY_BYTES} characters (it is read from the "
                           "environment only and never written); without it nothing is redacted")
    if len(value.encode()) < MIN_KEY_BYTES:
        raise StrettoError(f"{KEY_ENV} is {len(value.encode())} bytes; use at least {MIN_KEY_BYTES}")
    return value.encode()


_WORD = re.compile(r"[^\W_]+")
"""A word: a run of letters and digits. Pseudonyms are made word by word (see `Pseudonyms`)."""


@dataclass
class Pseudonyms:
    """The map from words to pseudonyms for one set of sessions.

    The learner compares values whole (an argument equals a result's field), as substrings of
    the user's words, and word by word (the user named a word of a record: "helmet" of
    `Cycling Helmet`). A map of whole values would keep the first and break the others, so the
    map is of words: every word of every rare value is hashed, everywhere it stands, and every
    equality of values, of words and of words within values holds in the copy as it did.
    """

    key: bytes
    rare: set[str] = field(default_factory=set)
    """Case-folded words to hash."""
    kept: set[str] = field(default_factory=set)
    """Case-folded words left as they are (a pseudonym must never equal one)."""
    _map: dict[str, str] = field(default_factory=dict)
    _taken: set[str] = field(default_factory=set)

    def pseudonym(self, word: str) -> str:
        """The pseudonym of a case-folded word."""
        found = self._map.get(word)
        if found is not None:
            return found
        candidate, shape = word, word
        for attempt in range(10_000):
            if attempt and attempt % 50 == 0:  # the shape is full (90 two-digit words): one more character
                shape += shape[-1]
            digest = hmac.new(self.key, f"{attempt}\x00{word}".encode("utf-8", "surrogatepass"),
                              hashlib.sha256).digest()
            candidate = _shaped(shape, digest)
            if candidate not in self.rare and candidate not in self._taken and candidate not in self.kept:
                break
        self._map[word] = candidate
        self._taken.add(candidate)
        return candidate

    def _word(self, match: re.Match[str]) -> str:
        word = match.group(0)
        folded = word.casefold()
        if folded not in self.rare:
            return word
        fake = self.pseudonym(folded)
        if len(fake) != len(word):
            return fake
        return "".join(f.upper() if c.isupper() else f for c, f in zip(word, fake))

    def text(self, text: str) -> str:
        """Text with every rare word in it replaced (its case carried over)."""
        if not text or not self.rare:
            return text
        return _WORD.sub(self._word, text)

    def value(self, value: Any) -> Any:
        """A scalar as it is in the copy (a number stays a number: its digits are words)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value
        text = json.dumps(value)
        mapped = self.text(text)
        if mapped == text:
            return value
        try:
            return type(value)(mapped)
        except ValueError:
            return value

    def structure(self, value: Any) -> Any:
        """A parsed value (JSON, a dict of arguments): every string, number and field name mapped."""
        if isinstance(value, dict):
            return {self.value(k) if isinstance(k, str) else k: self.structure(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.structure(v) for v in value]
        return self.value(value)


def _shaped(word: str, digest: bytes) -> str:
    """`word` with each letter and digit replaced from the hash: same shape, same length."""
    stream = _stream(digest, len(word))
    out = []
    for i, ch in enumerate(word):
        byte = stream[i]
        if ch in _DIGITS:
            out.append(_DIGITS[byte % 10] if i or len(word) == 1 or ch == "0" else "123456789"[byte % 9])
        elif ch.isalpha():
            out.append(_LOWER[byte % 26])
        else:
            out.append(ch)
    return "".join(out)


def _stream(digest: bytes, n: int) -> bytes:
    """At least `n` bytes drawn from `digest` (SHA-256 in counter mode past 32)."""
    out = bytearray(digest)
    counter = 0
    while len(out) < n:
        counter += 1
        out += hashlib.sha256(digest + counter.to_bytes(4, "big")).digest()
    return bytes(out)


# -- which values and words a session holds --------------------------------------------------------
@dataclass
class Held:
    """What one session holds: its values (normalized, `MIN_CHARS` or more), those under an
    operator-named field, and every word anywhere in it (case-folded)."""

    values: set[str] = field(default_factory=set)
    named: set[str] = field(default_factory=set)
    words: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    """Words of the session's structure: tool names, argument and field names, its app, its
    manifest. These name no one and the flow is keyed by them: never hashed."""


def session_held(session: Session, fields: frozenset[str] = frozenset()) -> Held:
    """The values and words of one session (see `Held`)."""
    held = Held()

    def scalar(value: Any, under: bool) -> None:
        norm = normalize(value) if not isinstance(value, bool) else None
        if norm is not None:
            held.words.update(w.casefold() for w in _WORD.findall(norm))
            if len(norm) >= MIN_CHARS:
                held.values.add(norm)
            if under:
                held.named.add(norm)

    def walk(value: Any, under: bool) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                scalar(k, under)
                if isinstance(k, str) and not any(c.isdigit() for c in k):  # a field's name, not a value
                    held.names.update(w.casefold() for w in _WORD.findall(k))
                walk(v, under or k in fields)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v, under)
        else:
            scalar(value, under)

    header = session.header
    structure_text = " ".join(filter(None, [header.app, header.harness, header.model_dump_json(include={"manifest"})]))
    held.names.update(w.casefold() for w in _WORD.findall(structure_text))
    for event in session.events:
        if isinstance(event, (LLMTurn, UserMessage)):
            held.words.update(w.casefold() for w in _WORD.findall(event.text))
            for call in event.calls:
                held.names.update(w.casefold() for w in _WORD.findall(" ".join([call.tool, *map(str, call.arguments)])))
                walk(call.arguments, False)
        if isinstance(event, Lookup):
            walk(event.arguments, False)
        if isinstance(event, (ToolResult, Lookup)):
            held.names.update(w.casefold() for w in _WORD.findall(event.tool))
            held.words.update(w.casefold() for w in _WORD.findall(event.content))
            structure = parse_result(event.content, event.parsed)
            if isinstance(structure, TextResult):
                for path, _address, value in leaves_addressed(structure):
                    if not path.endswith("[*]"):  # a `key: value` line's value, not the whole line
                        scalar(value, False)
            else:
                walk(structure, False)
    return held


def pseudonyms_for(sessions: Iterable[Session], key: bytes, k: int = DEFAULT_K,
                   fields: Iterable[str] = ()) -> Pseudonyms:
    """The map for a set of sessions: the words of every value held by fewer than `k` of them or
    under `fields`, and every word itself held by fewer than `k`, are hashed."""
    wanted = frozenset(fields)
    values: Counter[str] = Counter()
    words: Counter[str] = Counter()
    named: set[str] = set()
    structural: set[str] = set()  # tool, argument and app names
    for session in sessions:
        held = session_held(session, wanted)
        values.update(held.values)
        words.update(held.words)
        named |= held.named
        structural |= held.names
    rare_values = {v for v, n in values.items() if n < k} | named
    rare = {w for w, n in words.items() if n < k and len(w) >= MIN_WORD}
    for value in rare_values:  # a rare value of shared words (a price, an address) goes all the same
        rare.update(w.casefold() for w in _WORD.findall(value) if len(w) >= MIN_WORD)
    rare -= structural
    return Pseudonyms(key=key, rare=rare, kept=(set(words) | structural) - rare)


def rare_values(sessions: Iterable[Session], k: int = DEFAULT_K) -> set[str]:
    """The normalized values held by fewer than `k` sessions (what a grep of the copy must not find)."""
    values: Counter[str] = Counter()
    for session in sessions:
        values.update(session_held(session).values)
    return {v for v, n in values.items() if n < k}


# -- one session's copy ----------------------------------------------------------------------------
def redact_session(session: Session, names: Pseudonyms) -> Session:
    """The session with every rare word replaced, wherever it stands."""
    return Session(header=session.header, events=[_event(e, names) for e in session.events])


def _calls(calls: list[ToolCall], names: Pseudonyms) -> list[ToolCall]:
    return [c.model_copy(update={"arguments": names.structure(c.arguments)}) for c in calls]


def _event(event: Any, names: Pseudonyms) -> Any:
    if isinstance(event, (UserMessage, LLMTurn)):
        return event.model_copy(update={"text": names.text(event.text), "calls": _calls(event.calls, names)})
    if isinstance(event, (ToolResult, Lookup)):
        update: dict[str, Any] = {"content": _content(event.content, names)}
        if event.parsed is not None:
            update["parsed"] = names.structure(event.parsed)
        if isinstance(event, ToolResult) and event.appended:
            update["appended"] = names.text(event.appended)
        if isinstance(event, Lookup):
            update["arguments"] = names.structure(event.arguments)
        return event.model_copy(update=update)
    return event.model_copy(update={"detail": names.text(event.detail)}) if hasattr(event, "detail") else event


def _content(content: str, names: Pseudonyms) -> str:
    """A result's text: JSON re-written from its mapped structure (so text and structure agree,
    whatever escapes the original used), other text with its rare values replaced."""
    replaced = names.text(content)
    as_json = parse_json_content(content)
    if as_json is None:
        return replaced
    mapped = names.structure(as_json)
    if parse_json_content(replaced) == mapped:
        return replaced
    return json.dumps(mapped, ensure_ascii=False)



def differences(original: Any, redacted: Any, names: Pseudonyms, path: str = "", limit: int = 20) -> list[str]:
    """Where two JSON values (a flow learned from sessions and one learned from their copy) differ
    once the original's values are mapped as the copy's were: [] when they teach the same. A
    field name is the same when it is (a format's own field) or when its mapping is (a value
    used as a name: a word the user said, a field of a result named by a value)."""
    out: list[str] = []
    _diff(original, redacted, names, path, out, limit)
    return out


def _diff(a: Any, b: Any, names: Pseudonyms, path: str, out: list[str], limit: int) -> None:
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        seen: set[Any] = set()
        for key, value in a.items():
            other = key if key in b else names.text(key) if isinstance(key, str) else key
            if other not in b:
                out.append(f"{path}/{key}: only in the original's")
                continue
            seen.add(other)
            _diff(value, b[other], names, f"{path}/{key}", out, limit)
        out.extend(f"{path}/{key}: only in the copy's" for key in b if key not in seen)
    elif isinstance(a, list) and isinstance(b, list):
        if a and all(isinstance(x, str) for x in a) and sorted(a) == a:  # a sorted set of values
            present = set(b) if all(isinstance(y, str) for y in b) else set()
            if sorted(x if x in present else names.text(x) for x in a) != b:
                out.append(f"{path}: {a[:5]!r}…, {b[:5]!r}… in the copy's")
            return
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items, {len(b)} in the copy's")
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, names, f"{path}[{i}]", out, limit)
    elif names.value(a) != b and a != b:
        out.append(f"{path}: {str(a)[:60]!r}, {str(b)[:60]!r} in the copy's")


def mapped(value: Any, names: Pseudonyms) -> Any:
    """Any JSON value (a flow's) with its strings, field names and numbers mapped as the copy's
    are: `mapped(learn(S)) == learn(redact(S))` is what `stretto redact` promises."""
    if isinstance(value, dict):
        return {names.text(k) if isinstance(k, str) else k: mapped(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [mapped(v, names) for v in value]
    return names.value(value)


class FieldHasher:
    """At record time (`Stretto(redact_fields=[...])`, `stretto proxy --redact-field`): every value
    under a named field, and its words wherever they stand later (the user's words, results),
    is hashed before the event is written, so the app never stores those raw identifiers. Serving
    still sees the real values; the same key gives the same pseudonyms in every session."""

    def __init__(self, key: bytes, fields: Iterable[str]) -> None:
        self.fields = frozenset(fields)
        self.names = Pseudonyms(key=key)

    def event(self, event: Any) -> Any:
        """The event as it is written."""
        found: set[str] = set()
        for value in self._under_fields(event):
            found.update(w.casefold() for w in _WORD.findall(str(value)) if len(w) >= MIN_WORD)
        self.names.rare |= found
        return _event(event, self.names) if self.names.rare else event

    def _under_fields(self, event: Any) -> list[Any]:
        out: list[Any] = []

        def walk(value: Any, under: bool) -> None:
            if isinstance(value, dict):
                for k, v in value.items():
                    walk(v, under or k in self.fields)
            elif isinstance(value, (list, tuple)):
                for v in value:
                    walk(v, under)
            elif under and not isinstance(value, bool) and value is not None:
                out.append(value)

        for call in getattr(event, "calls", None) or []:
            walk(call.arguments, False)
        if isinstance(event, Lookup):
            walk(event.arguments, False)
        if isinstance(event, (ToolResult, Lookup)):
            walk(event.parsed if event.parsed is not None else parse_json_content(event.content), False)
        return out
