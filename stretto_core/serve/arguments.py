"""A lookup's bound arguments, checked against the tool's input contract before the call.

The values a lookup passes come from tool results, which are untrusted. Before stretto calls a
read it checks each bound value against what the tool takes: its JSON type, and the `enum`,
`pattern`, `maxLength`, `minimum` and `maximum` its schema gives (the live listing's contract),
and against the shape of the values the agents themselves passed in training (the flow's
`contracts.shapes`): a value far longer than any the agent passed, or holding a symbol none of
theirs held (`/` in an order id, `'` in a name; `-`, `_` and `.` are always taken), is refused. A refused lookup is not made; the
session records a `refusal` (`argument_refused`) naming the argument and why.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from stretto_core.sessions.manifest import ArgumentLimits, InputContract, json_type
from stretto_core.sessions.shapes import ANY_SYMBOL, ValueShape, symbols_in, value_length

LENGTH_FACTOR = 4
"""A bound value may be this many times longer than the longest the agents passed..."""

LENGTH_SLACK = 16
"""... or this many characters longer, whichever allows more (a short id grows a little)."""

ALWAYS_TAKEN = frozenset("-_.")
"""Symbols a bound value may hold though no training value did: ids, file and host names join
words with them (a flow learned on `/srv/repos/project1` serves `/tmp/test_repo-2`)."""

PATTERN_CHECKED_UP_TO = 1_000
"""A schema's `pattern` is matched only on values up to this long (a longer one is refused):
a server's pattern runs on the agent's time, so its input is kept short."""


def argument_refusal(arguments: Mapping[str, Any], live: InputContract | None, pinned: InputContract | None,
                     shapes: Mapping[str, ValueShape] | None) -> str | None:
    """Why a lookup with these bound `arguments` may not be made, or None when each value fits."""
    for name, value in arguments.items():
        why = _value_refusal(name, value, live, pinned, (shapes or {}).get(name))
        if why is not None:
            return why
    return None


def _value_refusal(name: str, value: Any, live: InputContract | None, pinned: InputContract | None,
                   shape: ValueShape | None) -> str | None:
    declared = _declared_type(name, live) or _declared_type(name, pinned)
    kind = json_type(value)
    if declared is not None and not _admits(declared, kind):
        return f"{name} is of type {kind} where the tool takes {declared}"
    limits = (live.limits or {}).get(name) if live is not None else None
    if limits is not None:
        why = _limits_refusal(name, value, limits)
        if why is not None:
            return why
    if shape is not None and shape.longest > 0:
        length = value_length(value)
        allowed = max(shape.longest * LENGTH_FACTOR, shape.longest + LENGTH_SLACK)
        if length > allowed:
            return (f"{name} is {length} characters long, far longer than any value the agent passed "
                    f"({shape.longest})")
        if shape.symbols != ANY_SYMBOL:
            new = sorted(set(symbols_in(value)) - set(shape.symbols) - ALWAYS_TAKEN)
            if new:
                shown = "".join(new).replace("\n", "\\n").replace("\t", "\\t")
                return f"{name} holds {shown!r}, which no value the agent passed held"
    return None


def _declared_type(name: str, contract: InputContract | None) -> str | None:
    if contract is None:
        return None
    declared = contract.args.get(name)
    return None if declared in (None, "", "any") else declared


def _admits(declared: str, kind: str) -> bool:
    types = {t.strip() for t in declared.split("|")}
    if "any" in types or kind in types:
        return True
    return kind == "integer" and "number" in types


def _limits_refusal(name: str, value: Any, limits: ArgumentLimits) -> str | None:
    if limits.enum is not None and value not in limits.enum:
        return f"{name} is not one of the values the tool's schema lists"
    if isinstance(value, str):
        if limits.max_length is not None and len(value) > limits.max_length:
            return f"{name} is longer than the schema's maxLength ({limits.max_length})"
        if limits.pattern is not None:
            if len(value) > PATTERN_CHECKED_UP_TO:
                return f"{name} is too long to check against the schema's pattern"
            try:
                if re.search(limits.pattern, value) is None:
                    return f"{name} does not match the schema's pattern"
            except re.error:
                pass  # a pattern Python cannot read says nothing here
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if limits.minimum is not None and value < limits.minimum:
            return f"{name} is below the schema's minimum ({limits.minimum:g})"
        if limits.maximum is not None and value > limits.maximum:
            return f"{name} is above the schema's maximum ({limits.maximum:g})"
    return None
