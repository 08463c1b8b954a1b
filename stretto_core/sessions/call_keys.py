"""A call's canonical key, and the quick JSON of flat arguments it and the appendix are written with.

Serving keys every call and writes every lookup's arguments into the appendix; learning keys
every call at every decision. Most arguments are a few text and whole-number fields, and for
those `json.dumps` spends more on its set-up than on writing: `flat_json` writes the same text
directly, and says None for anything else, where the encoder is used as before.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

from stretto_core.sessions.values import argument_leaves


def call_key(tool: str, arguments: dict[str, Any]) -> str:
    """A canonical key for a call: same tool and same arguments give the same key."""
    if type(arguments) is dict:
        flat = flat_json(arguments)
        if flat is not None:
            return tool + " " + flat
    try:
        return tool + " " + json.dumps(arguments, sort_keys=True, default=str, separators=(",", ":"))
    except (RecursionError, ValueError, TypeError):  # arguments nested beyond what JSON writes
        return tool + " " + repr(sorted(map(str, argument_leaves(arguments))))


def flat_json(arguments: dict[str, Any], *, item: str = ",", key: str = ":", ascii: bool = True) -> str | None:
    """`json.dumps(arguments, sort_keys=True, separators=(item, key), ensure_ascii=ascii)` for
    arguments of text and whole numbers alone, the same text; None for any other arguments."""
    quoted = encode_basestring_ascii if ascii else encode_basestring
    parts = []
    try:
        names = sorted(arguments)
    except TypeError:
        return None
    for name in names:
        value = arguments[name]
        kind = type(value)
        if type(name) is not str:
            return None
        if kind is str:
            parts.append(quoted(name) + key + quoted(value))
        elif kind is int:
            parts.append(quoted(name) + key + int.__repr__(value))
        else:
            return None
    return "{" + item.join(parts) + "}"
