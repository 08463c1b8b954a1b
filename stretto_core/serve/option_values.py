"""What each serving option may hold, checked the same way wherever it is given.

`StrettoOptions` (Python, every adapter), `EngineConfig` (the engine, replay) and the CLI's
`stretto proxy` options all check their values with these functions, so a value means the same
thing, and is refused with the same one-line message, in every harness. Each check returns the
value it accepted, normalised (tool names as a tuple, numbers as given), or raises
`OptionError` naming the option and quoting what it got.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from stretto_core.errors import OptionError, snippet

MAX_QUOTED = 80
"""An error quotes at most this many characters of the value it refuses."""


def quoted(value: Any) -> str:
    """A short `repr` of a refused value."""
    return snippet(repr(value), MAX_QUOTED)


def check_fraction(name: str, value: Any) -> float:
    """A finite number in [0, 1] (a threshold): not NaN, not a bool, not text."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise OptionError(f"{name} must be a number in [0, 1], got {quoted(value)}")
    return float(value)


def check_count(name: str, value: Any, *, least: int = 0) -> int:
    """A whole number >= `least` (a budget of lookups): not a bool, not a float, not text."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise OptionError(f"{name} must be a whole number >= {least}, got {quoted(value)}")
    return value


def check_seconds(name: str, value: Any) -> float:
    """A finite number of seconds > 0 (a time limit): not 0, not NaN, not infinite, not text."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise OptionError(f"{name} must be a positive, finite number of seconds, got {quoted(value)}")
    return float(value)


def check_days(name: str, value: Any) -> float:
    """A positive number of days (a retention): not 0 (which would delete every session), not
    NaN, not infinite (keep forever is leaving the option out), not text."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
        raise OptionError(f"{name} must be a positive number of days, got {quoted(value)}")
    return float(value)


def check_names(name: str, value: Any) -> tuple[str, ...]:
    """Tool names: an iterable of non-empty strings (a list, tuple or set), duplicates dropped,
    order kept. One string is refused, not read as its letters: `reads="get_order"` would
    otherwise mean the tools `g`, `e`, `t`, ..."""
    if isinstance(value, str):
        raise OptionError(f"{name} must be a list of tool names, not one string: write {name}=[{value!r}]"
                          if len(value) <= MAX_QUOTED else f"{name} must be a list of tool names, not one string")
    if isinstance(value, (bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise OptionError(f"{name} must be a list of tool names, got {quoted(value)}")
    names: dict[str, None] = {}
    for item in value:
        if not isinstance(item, str):
            raise OptionError(f"{name} must hold tool names (strings), got {quoted(item)}")
        if not item.strip():
            raise OptionError(f"{name} holds an empty tool name")
        names[item] = None
    return tuple(names)


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """One of a few words."""
    allowed = tuple(choices)
    if not isinstance(value, str) or value not in allowed:
        raise OptionError(f"{name} must be one of {', '.join(allowed)}, got {quoted(value)}")
    return value


def check_text(name: str, value: Any) -> str:
    """A non-empty string (a name written into each session's header)."""
    if not isinstance(value, str) or not value.strip():
        raise OptionError(f"{name} must be a non-empty string, got {quoted(value)}")
    return value
