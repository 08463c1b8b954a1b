"""JSON-RPC 2.0 messages as the proxy sees them: plain dicts, classified, never rewritten.

The proxy forwards what it does not need to understand exactly as it came, so it keeps each
message as the JSON object it parsed and only looks at the few keys that route it (`id`,
`method`, `result`, `error`). The MCP protocol has two eras the proxy must both serve: the
2025-11-25 handshake (`initialize`, then plain requests) and 2026-07-28, where each request
carries its protocol version, client info and capabilities in `params._meta`. The proxy's own
requests (lookups, re-reading the tool listing) copy that envelope from the host's latest
request, so the downstream server sees them in the host's era.
"""

from __future__ import annotations

import json
from typing import Any

ENVELOPE_KEYS = ("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientInfo",
                 "io.modelcontextprotocol/clientCapabilities")
"""The 2026-07-28 per-request envelope in `params._meta` (the log-level opt-in is left out, so
the downstream sends no log lines about the proxy's own requests)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
SERVER_GONE = -32000
"""A JSON-RPC server error the proxy sends when the downstream cannot answer (it exited, hung)."""


class Malformed:
    """A line that is not a JSON-RPC message, kept with why, for the log and the error reply."""

    __slots__ = ("line", "reason", "message_id", "too_long")

    def __init__(self, line: str, reason: str, message_id: Any = None) -> None:
        self.line = line
        self.reason = reason
        self.message_id = message_id
        self.too_long: str | None = None
        """For a message over the line limit: `"request"` or `"answer"`, as its head shows."""

    def excerpt(self, limit: int = 120) -> str:
        text = self.line.strip()
        return text if len(text) <= limit else text[:limit] + "..."


class Frame(dict):  # type: ignore[type-arg]
    """A message as it came off a stdio line, with that line's bytes (`raw`): forwarded unchanged,
    it goes out as those very bytes (`encode`), so a peer's JSON passes byte for byte, escapes,
    key order and lone surrogates (`"\\ud83d"`) included. The proxy never changes a message in
    place: one it changes is a new dict (`{**message, ...}`), encoded afresh."""

    __slots__ = ("raw",)

    def __init__(self, data: dict[str, Any], raw: bytes) -> None:
        super().__init__(data)
        self.raw = raw


def parse_line(line: str, raw: bytes | None = None) -> dict[str, Any] | Malformed:
    """One line of a stdio stream as a JSON-RPC message (a dict), or why it is not one; given the
    line's bytes, the message is a `Frame` that is forwarded as them."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:
        return Malformed(line, f"not JSON ({exc})")
    message = check(data, line)
    if raw is not None and isinstance(message, dict):
        return Frame(message, raw.rstrip(b"\r\n") + b"\n")
    return message


def check(data: Any, line: str = "") -> dict[str, Any] | Malformed:
    """Whether a parsed value is a JSON-RPC 2.0 message; batches are not part of MCP."""
    if not isinstance(data, dict):
        return Malformed(line or repr(data)[:200], f"a JSON {type(data).__name__}, not an object")
    message_id = data.get("id")
    if data.get("jsonrpc") != "2.0":
        return Malformed(line or repr(data)[:200], 'no "jsonrpc": "2.0"', message_id)
    method = data.get("method")
    if method is not None:
        if not isinstance(method, str):
            return Malformed(line or repr(data)[:200], '"method" is not a string', message_id)
        if "params" in data and not isinstance(data["params"], (dict, list)):
            return Malformed(line or repr(data)[:200], '"params" is neither an object nor an array', message_id)
        return data
    if "id" not in data:
        return Malformed(line or repr(data)[:200], "neither a request, a notification nor a response")
    if ("result" in data) == ("error" in data):
        return Malformed(line or repr(data)[:200], 'a response needs exactly one of "result" and "error"',
                         message_id)
    if "error" in data and not isinstance(data["error"], dict):
        return Malformed(line or repr(data)[:200], '"error" is not an object', message_id)
    return data


def is_request(message: dict[str, Any]) -> bool:
    return "method" in message and "id" in message


def is_notification(message: dict[str, Any]) -> bool:
    return "method" in message and "id" not in message


def is_response(message: dict[str, Any]) -> bool:
    return "method" not in message


def id_key(message_id: Any) -> str:
    """A hashable key for a JSON-RPC id that keeps 1 and "1" apart."""
    return f"{type(message_id).__name__}:{message_id}"


def request(message_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": message_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def error_response(message_id: Any, code: int, text: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": message_id, "error": error}


def params_of(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def meta_of(message: dict[str, Any]) -> dict[str, Any]:
    meta = params_of(message).get("_meta")
    return meta if isinstance(meta, dict) else {}


def envelope_of(message: dict[str, Any]) -> dict[str, Any] | None:
    """The 2026-07-28 envelope a host request carries, or None for a handshake-era request."""
    meta = meta_of(message)
    envelope = {key: meta[key] for key in ENVELOPE_KEYS if key in meta}
    return envelope or None


def encode(message: dict[str, Any]) -> bytes:
    """One stdio frame: compact JSON and a newline (MCP's stdio framing; no embedded newlines).
    A `Frame` goes out as the bytes it came as; a message holding a lone surrogate, which UTF-8
    cannot carry as such, goes out with its non-ASCII characters escaped (the same JSON value)."""
    if type(message) is Frame:
        return message.raw
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(message, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")
