"""The shape of the values an agent passed to one argument of a tool: how long, which symbols.

A lookup's arguments are bound from tool results, which are untrusted: a server can put a
metadata-service URL, `../../etc/shadow`, SQL or a prompt-injection line where an order id
was. A flow counts the shape of the values the agents themselves passed to each argument in
training (the longest, and which ASCII symbols they held), so serving can refuse a bound value
of another shape (`serve/arguments.py`). Letters and digits, of any script, are always taken.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

ANY_SYMBOL = "any"
"""`symbols` when more than `MAX_SYMBOLS` distinct symbols were seen: any symbol is taken (letters
never appear in `symbols` otherwise, so the word cannot be mistaken for three symbols)."""

MAX_SYMBOLS = 24


class ValueShape(BaseModel):
    """The values seen for one argument: the longest's length, and the symbols they held."""

    model_config = ConfigDict(extra="forbid")

    longest: int = 0
    """The length of the longest value (a string's characters; any other value's compact JSON)."""
    symbols: str = ""
    """The ASCII characters other than letters and digits seen in string values (space, tab and
    newline included), sorted; `any`: too many to list, any is taken."""

    def joined(self, other: "ValueShape | None") -> "ValueShape":
        """The shape of both sets of values together."""
        if other is None:
            return self
        return ValueShape(longest=max(self.longest, other.longest), symbols=_join(self.symbols, other.symbols))


def value_length(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    try:
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
    except (ValueError, TypeError, RecursionError):
        return len(str(value))


def symbols_in(value: Any) -> str:
    """The ASCII symbols a string holds (non-strings hold none: their type is checked apart)."""
    if not isinstance(value, str):
        return ""
    return "".join(sorted({ch for ch in value if ch.isascii() and not ch.isalnum()}))


def shape_of(value: Any, before: ValueShape | None = None) -> ValueShape:
    """`before` widened by one more value."""
    shape = ValueShape(longest=value_length(value), symbols=_join(symbols_in(value), ""))
    return shape.joined(before)


def _join(a: str, b: str) -> str:
    if ANY_SYMBOL in (a, b):
        return ANY_SYMBOL
    joined = "".join(sorted(set(a) | set(b)))
    return ANY_SYMBOL if len(joined) > MAX_SYMBOLS else joined
