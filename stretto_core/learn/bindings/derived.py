"""Derived bindings: values composed from earlier values, and values found in free text.

Real MCP servers answer in text and take arguments the agent builds: `read_text_file(path)`
after `list_directory(path)` passes the folder it listed joined with a name from a line
`[FILE] notes.md`; `git_show(revision)` after `git_log` passes the sha of a line `Commit: 3f2a…`.
No result holds such a value whole, so the exact sources (`bindings_sources`) find nothing.

A template is a short sequence of literals and slots, written as its key:

    {arg list_directory path}/{text list_directory [FILE] }
    {text git_log Commit: }
    refs/heads/{path list_branches $[*].name}

Slots:

    {arg T a}      the newest value the agent itself passed as argument `a` of `T` (a successful call)
    {text T A}     in the raw text of T's results, the token right after a line's start `A`
                   (leading spaces skipped; a token is a run without spaces, quotes or brackets,
                   its trailing `.`, `,`, `:` stripped): `A` is the anchor, at most 40 characters,
                   without digits
    {line T A}     the same, the rest of the line (a name with spaces)
    {path T p}     the values at path `p` of T's results (a field of a record, with literals)

A template holds one `arg` slot at most, at its start, and one piece (`text`, `line` or
`path`) at most; literals are at most 24 characters and never words the user wrote (so a flow
never carries a user's value to another session; an `arg` slot is filled in the session it
serves, from the agent's own call). A piece the user wrote is never a candidate (the
user's words are no source here: the agent took that value from them, not from the result).
The pick: the first candidate, in the pool's order (the newest result first, document order
within), whose composed value was not yet passed to the tool as the argument.

A lookup is never bound by `arg` slots alone (`bindings_compile`): its arguments would only
repeat values the agent passed already, mostly values the user gave; such an argument rides
along with one taken from a result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from stretto_core.sessions.state import RAW_TEXT, ResultEntry, ToolState
from stretto_core.sessions.values import normalize

MAX_ANCHOR = 40
"""A text slot's anchor is at most this many characters."""

MAX_LITERAL = 24
"""A template's literal is at most this many characters."""

MAX_SEPARATOR = 3
"""The literal between an `arg` slot and the piece is at most this many characters."""

MAX_TEXT_LINES = 400
"""… and its first this many lines."""

TOKENS_PER_LINE = 3
"""A line gives candidates for the anchors before its first this many tokens."""

MAX_VALUE = 512
"""Values longer than this are not decomposed."""


SLOT_KINDS = ("arg", "text", "line", "path")

_TOKEN = re.compile(r"[^\s'\"`<>()\[\]{},;]+")
_SLOT = re.compile(r"\{(arg|text|line|path) (\S+) ([^{}]*)\}")
_NOT_ANCHOR = re.compile(r"[0-9{}]")


@dataclass(frozen=True)
class Slot:
    kind: str
    tool: str
    key: str
    """The argument (`arg`), anchor (`text`, `line`) or path (`path`)."""

    def text(self) -> str:
        return "{" + f"{self.kind} {self.tool} {self.key}" + "}"


@dataclass(frozen=True)
class Template:
    parts: tuple[Any, ...]

    @property
    def key(self) -> str:
        return "".join(p.text() if isinstance(p, Slot) else p for p in self.parts)

    @property
    def slots(self) -> list[Slot]:
        return [p for p in self.parts if isinstance(p, Slot)]


def parse_template(key: str) -> Template:
    """The template a key writes; literals are what lies between slots."""
    parts: list[Any] = []
    at = 0
    for m in _SLOT.finditer(key):
        if m.start() > at:
            parts.append(key[at:m.start()])
        parts.append(Slot(m.group(1), m.group(2), m.group(3)))
        at = m.end()
    if at < len(key):
        parts.append(key[at:])
    return Template(tuple(parts))


# -- what a result's text offers --------------------------------------------------------------

def text_candidates(entry: ResultEntry) -> list[tuple[str, str, str]]:
    """(kind, anchor, piece) of every line of the result's raw text, in document order (cached on
    the result's index, shared by every state holding the same result)."""
    views = entry.index_views
    got = views.get("text_candidates")
    if got is not None:
        return got
    text = entry.cache.get(RAW_TEXT)
    if not isinstance(text, str):
        return []  # this state kept no text of the tool: nothing to read, nothing cached
    out: list[tuple[str, str, str]] = []
    if not _looks_json(text):
        for raw in text.splitlines()[:MAX_TEXT_LINES]:
            line = raw.strip()
            for n, m in enumerate(_TOKEN.finditer(line)):
                if n >= TOKENS_PER_LINE:
                    break
                start = m.start()
                anchor = line[:start]
                if start > MAX_ANCHOR or _NOT_ANCHOR.search(anchor):
                    break
                token = m.group(0).rstrip(".,:")
                if token:
                    out.append(("text", anchor, token))
                if m.end() < len(line):
                    out.append(("line", anchor, line[start:]))
    views["text_candidates"] = out
    return out


def _looks_json(text: str) -> bool:
    """JSON results have exact paths for every value: no text slots there."""
    head = text.lstrip()[:1]
    return head in ("{", "[") and text.rstrip()[-1:] in ("}", "]") and '":' in text[:200]


def _piece_values(slot: Slot, entry: ResultEntry) -> Iterator[Any]:
    if slot.kind == "path":
        yield from entry.index.by_path.get(slot.key, ())
        return
    for kind, anchor, piece in text_candidates(entry):
        if kind == slot.kind and anchor == slot.key:
            yield piece


# -- serving (and evaluating in learning): the pick --------------------------------------------

def arg_value(pools: "Pools", slot: Slot) -> str | None:
    """The newest string the agent passed as `slot.key` to `slot.tool` in a successful call."""
    for entry in pools(slot.tool):
        if entry.by_agent:
            value = entry.arguments.get(slot.key)
            if isinstance(value, str) and value.strip():
                return value
    return None


class Pools:
    """A tool's successful visible results, newest first: the live state's, or as they stood earlier."""

    def __init__(self, state: ToolState, upto: int | None = None) -> None:
        self.state, self.upto = state, upto

    def __call__(self, tool: str) -> list[ResultEntry]:
        state = self.state
        if self.upto is None:
            results = state.ok_results.get(tool) or []
            return results[:-state.look_back - 1:-1]
        out: list[ResultEntry] = []
        results = state.results
        for i in range(min(self.upto, len(results)) - 1, -1, -1):
            entry = results[i]
            if entry.tool == tool and entry.ok and entry.visible:
                out.append(entry)
                if len(out) >= state.look_back:
                    break
        return out


def candidates(template: Template, pools: Pools) -> Iterator[str]:
    """Every value the template composes, in pick order."""
    prefix = ""
    piece: Slot | None = None
    suffix = ""
    for part in template.parts:
        if isinstance(part, Slot):
            if part.kind == "arg":
                value = arg_value(pools, part)
                if value is None:
                    return
                prefix += value
            else:
                piece = part
        elif piece is None:
            prefix += part
        else:
            suffix += part
    if piece is None:
        yield prefix + suffix
        return
    state = pools.state
    for entry in pools(piece.tool):
        for value in _piece_values(piece, entry):
            if isinstance(value, (str, int, float)) and not isinstance(value, bool) and not state.mentioned(value):
                yield prefix + str(value) + suffix


def has_piece(template: Template) -> bool:
    return any(s.kind != "arg" for s in template.slots)


def derived_pick(template: Template, pools: Pools, passed: set[str] | frozenset[str] | tuple[str, ...]) -> str | None:
    """The template's pick: its first composed value not yet passed for the argument (a template
    of an `arg` slot alone has one value, passed again as the agent would: a repo path for each
    commit shown)."""
    walks = has_piece(template)
    for value in candidates(template, pools):
        key = normalize(value)
        if key is not None and (not walks or key not in passed):
            return value
    return None


def text_tools(templates: Sequence[str]) -> set[str]:
    """The tools whose raw text these templates read."""
    return {s.tool for t in templates for s in parse_template(t).slots if s.kind in ("text", "line")}


def path_sources(templates: Sequence[str]) -> set[tuple[str, str]]:
    """The (tool, path) sources these templates read (a served session's focus)."""
    return {(s.tool, s.key) for t in templates for s in parse_template(t).slots if s.kind == "path"}
