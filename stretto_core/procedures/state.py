"""The tool state a procedure decides on, and its features, named as a person would read them.

A state is the ticket and the calls made so far with their results. Its features (all binary):

- `ticket: WORD` / `ticket: WORD WORD`: a word or word pair of the ticket;
- `called TOOL`, `made ACTION`: a tool was called, an action (a tool with its bindings) was made;
- `TOOL:error`: the newest result of the tool was an error;
- `TOOL:fresh`: no write came after the newest result of the tool;
- `TOOL:FIELD=value`, `TOOL:A.B=value`, `TOOL:LIST[*].FIELD=value`, `TOOL:[*].FIELD=value`:
  a scalar of the newest JSON result (strings without digits, booleans and nulls only: numbers
  and identifiers would not carry to other customers);
- `TOOL:len(LIST)=0|1|2+`, `TOOL:len=0|1|2+`: the length of a list in it;
- `TOOL:A>=B`: two numeric fields, or two ISO dates, of one object compared;
- `TOOL:says LINE`: a line of a text result, or a ` | `-separated piece of one, digits masked.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from stretto_core.procedures.ir import START_SITE

MAX_SCALAR_TEXT = 40
"""Longer strings are free text, not states."""

_DIGITS = re.compile(r"\d+")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_WORD = re.compile(r"[a-z]+")
MIN_WORD = 3


def parse_json(text: str) -> Any:
    """The JSON of a result, or None when it is not a JSON object or list."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def mask(line: str) -> str:
    """A line with every run of digits replaced by `#`: the same line for every value."""
    return _DIGITS.sub("#", line.strip())


def bucket(n: int) -> str:
    return "0" if n == 0 else "1" if n == 1 else "2+"


def _admissible(value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return True
    return isinstance(value, str) and len(value) <= MAX_SCALAR_TEXT and not any(c.isdigit() for c in value)


def _scalar_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _object_tokens(obj: dict[str, Any], prefix: str, out: list[str]) -> None:
    numbers: list[tuple[str, float]] = []
    dates: list[tuple[str, str]] = []
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            for inner, v in value.items():
                if _admissible(v):
                    out.append(f"{name}.{inner}={_scalar_text(v)}")
        elif isinstance(value, list):
            out.append(f"len({name})={bucket(len(value))}")
            for element in value:
                if isinstance(element, dict):
                    for inner, v in element.items():
                        if _admissible(v):
                            out.append(f"{name}[*].{inner}={_scalar_text(v)}")
        elif _admissible(value):
            out.append(f"{name}={_scalar_text(value)}")
        number = _number(value)
        if number is not None and not prefix:
            numbers.append((key, number))
        elif isinstance(value, str) and _DATE.match(value) and not prefix:
            dates.append((key, value[:10]))
    for pairs in (numbers, dates):
        for a, x in pairs:
            for b, y in pairs:
                if a != b and x >= y:
                    out.append(f"{a}>={b}")


def result_tokens(content: str, parsed: Any) -> list[str]:
    """What a result says, as tokens (without the tool's name), in a stable order, deduplicated."""
    out: list[str] = []
    if isinstance(parsed, dict):
        _object_tokens(parsed, "", out)
    elif isinstance(parsed, list):
        out.append(f"len={bucket(len(parsed))}")
        for element in parsed:
            if isinstance(element, dict):
                for key, v in element.items():
                    if _admissible(v):
                        out.append(f"[*].{key}={_scalar_text(v)}")
    else:
        for line in content.splitlines():
            if not line.strip():
                continue
            out.append(f"says {mask(line)}")
            if " | " in line:
                out.extend(f"says {mask(piece)}" for piece in line.split(" | ") if piece.strip())
    return list(dict.fromkeys(out))


def ticket_words(ticket: str) -> list[str]:
    """The ticket's words (letters only, at least three) and consecutive word pairs."""
    words = [w for w in _WORD.findall(ticket.lower()) if len(w) >= MIN_WORD]
    pairs = [f"{a} {b}" for a, b in zip(words, words[1:])]
    return list(dict.fromkeys(words + pairs))


@dataclass
class Step:
    """One call made and its result, with the result's tokens computed once."""

    tool: str
    arguments: dict[str, Any]
    content: str
    error: bool
    kind: str = "read"
    action: str | None = None
    parsed: Any = None
    tokens: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, tool: str, arguments: dict[str, Any], content: str, error: bool, kind: str,
           action: str | None = None) -> "Step":
        parsed = None if error else parse_json(content)
        return cls(tool, dict(arguments), content, error, kind, action, parsed, result_tokens(content, parsed))

    def call_key(self) -> str:
        return call_key(self.tool, self.arguments)


def call_key(tool: str, arguments: dict[str, Any]) -> str:
    return f"{tool}{json.dumps(arguments, sort_keys=True, default=str)}"


class RunState:
    """The ticket and the calls so far; what a tree, a binding and the guard look at."""

    def __init__(self, ticket: str, steps: list[Step] | None = None) -> None:
        self.ticket = ticket
        self.ticket_lower = ticket.lower()
        self.words = ticket_words(ticket)
        self.steps: list[Step] = []
        for step in steps or []:
            self.add(step)

    def add(self, step: Step) -> None:
        self.steps.append(step)

    def prefix(self, n: int) -> "RunState":
        state = RunState.__new__(RunState)
        state.ticket, state.ticket_lower, state.words = self.ticket, self.ticket_lower, self.words
        state.steps = self.steps[:n]
        return state

    def site(self) -> str:
        if not self.steps:
            return START_SITE
        last = self.steps[-1]
        return f"{last.tool} (failed)" if last.error else last.tool

    def last_write_index(self) -> int:
        for i in range(len(self.steps) - 1, -1, -1):
            if self.steps[i].kind != "read":
                return i
        return -1

    def forbidden(self, tool: str, arguments: dict[str, Any], kind: str) -> bool:
        """The guard: the same read again before a write, or the same write again before another.

        A write may be made again once another write came after it (a reboot after the line is
        resumed); never twice in a row, so no toggle is undone by the call that made it.
        """
        key = call_key(tool, arguments)
        if kind == "read":
            since = self.steps[self.last_write_index() + 1:]
            return any(s.call_key() == key for s in since)
        for i in range(len(self.steps) - 1, -1, -1):
            if self.steps[i].call_key() == key:
                return not any(s.kind != "read" for s in self.steps[i + 1:])
        return False

    def features(self, vocab: set[str] | None = None) -> set[str]:
        """Every feature of the state (ticket words limited to `vocab` when given)."""
        feats = {f"ticket: {w}" for w in self.words if vocab is None or w in vocab}
        newest: dict[str, int] = {}
        for i, step in enumerate(self.steps):
            newest[step.tool] = i
            feats.add(f"called {step.tool}")
            if step.action:
                feats.add(f"made {step.action}")
        last_write = self.last_write_index()
        for tool, i in newest.items():
            step = self.steps[i]
            if step.error:
                feats.add(f"{tool}:error")
            if i > last_write or (i == last_write and step.kind != "read"):
                feats.add(f"{tool}:fresh")
            feats.update(f"{tool}:{token}" for token in step.tokens)
        return feats
