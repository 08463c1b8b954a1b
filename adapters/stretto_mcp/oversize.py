"""A message longer than the proxy's line limit: who it was for, from its two ends alone.

The proxy never holds a line past `LINE_LIMIT` in memory. To answer such a message at once
(a request gets a JSON-RPC error, a server's oversized answer fails the host's request it
answers), it keeps the line's first and last few kilobytes and reads the JSON-RPC `id` from
them: a top-level `"id"` in the head (Python SDKs write it before `params`/`result`), or a
closing `"id": ...}` at the tail (the TypeScript SDK writes it last).
"""

from __future__ import annotations

import json
import re
from typing import Any

END_BYTES = 64 * 1024
"""How much of each end of an oversized line is kept."""

_TAIL_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")\s*}\s*$')
_NO_ID = object()


def id_from_ends(head: bytes, tail: bytes) -> Any:
    """The JSON-RPC id an oversized message carries, or None when its ends do not show one."""
    found = _head_key(head, b"id")
    if found is _NO_ID:
        match = _TAIL_ID.search(tail)
        found = _value(match.group(1)) if match else _NO_ID
    return None if found is _NO_ID else found


def is_request_head(head: bytes) -> bool:
    """Whether the head shows a top-level `method` (a request or a notification, not an answer)."""
    return _head_key(head, b"method") is not _NO_ID


def _value(raw: bytes) -> Any:
    try:
        value = json.loads(raw)
    except ValueError:
        return _NO_ID
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else _NO_ID


def _head_key(head: bytes, key: bytes) -> Any:
    """The scalar value of a top-level key in the head of a JSON object (a small scan: strings
    and nesting depth only), or `_NO_ID`."""
    depth, i, n = 0, 0, len(head)
    last_string: bytes | None = None
    while i < n:
        c = head[i]
        if c == 0x22:  # a string: find its end, skipping escapes
            j = i + 1
            while j < n and head[j] != 0x22:
                j += 2 if head[j] == 0x5C else 1
            if j >= n:
                return _NO_ID
            last_string = head[i + 1:j]
            i = j + 1
            continue
        if c in (0x7B, 0x5B):  # { [
            depth += 1
        elif c in (0x7D, 0x5D):  # } ]
            depth -= 1
        elif c == 0x3A and depth == 1 and last_string == key:  # the key's colon at the top level
            match = re.match(rb'\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")', head[i + 1:i + 260])
            return _value(match.group(1)) if match else _NO_ID
        elif c not in b" \t\r\n":
            last_string = None if c != 0x3A else last_string
        if c in (0x2C, 0x7B):
            last_string = None
        i += 1
    return _NO_ID
