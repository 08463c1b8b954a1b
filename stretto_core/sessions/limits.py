"""How deep stretto reads untrusted values: tool results, arguments and session lines.

Tool results and arguments come from servers and models stretto does not control. Nothing walks
them by recursion deeper than `MAX_DEPTH`; a value nested deeper is not parsed (its text stays),
and a session line nested deeper than `MAX_LINE_DEPTH` is skipped like any malformed line.
Checks are iterative, so no depth can overflow the stack.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 64
"""Containers inside containers a result or an argument may nest; real results nest a handful."""

MAX_LINE_DEPTH = MAX_DEPTH + 8
"""The same for a whole session line (an event wraps its result in a few levels of its own)."""


def deeper_than(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether containers (dicts, lists, tuples, sets) nest more than `limit` deep in `value`."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, (list, tuple, set, frozenset)):
            children = node
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list, tuple, set, frozenset)))
    return False


def may_nest(text: str, limit: int = MAX_DEPTH) -> bool:
    """A cheap first test for JSON text: fewer opening brackets than `limit` cannot nest deeper."""
    return text.count("[") + text.count("{") > limit
