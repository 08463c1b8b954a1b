"""Turn whatever a tool returned into bounded text, and fence lookups inside the agent's result.

Adapters hand the engine results of many shapes: a string, a dict, bytes, `None`, an MCP list of
content blocks, a pydantic model. A lookup's result is untrusted text from a server, so it is
bounded in size, and it is appended inside a fence the server cannot forge: each session draws
a random delimiter, and text inside a result that looks like stretto's own header is escaped.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any, Sequence

from stretto_core.sessions.call_keys import flat_json
from stretto_core.sessions.model import Lookup
from stretto_core.sessions.renamed import renamed_field

MAX_RESULT_CHARS = 20_000
"""A lookup's result longer than this is cut (with a note) before it reaches the agent."""

RECORDED_RESULT_CHARS = 1_000_000
"""The agent's own result is recorded whole up to this many characters (docs/formats.md); a
longer one is recorded cut, with a note in its text and the count cut in `ToolResult.cut`."""

WHOLE = 1 << 62
"""A `result_text` limit that cuts nothing (the recording bound is applied once, where it is recorded)."""

APPENDIX_TITLE = "Also looked up automatically (current results; no need to repeat these calls)"


_PROCESS_KEY = secrets.token_bytes(16)
"""This process's secret: a fence carries a tag of it, so only a fence this process drew passes
`is_our_fence` (a server that writes an appendix of its own cannot tag it)."""


def new_fence() -> str:
    """A per-session delimiter no tool result can predict or forge: 8 random hex digits and an
    8-digit tag of them under this process's secret."""
    nonce = secrets.token_hex(4)
    return nonce + _tag(nonce)


def _tag(nonce: str) -> str:
    return hmac.new(_PROCESS_KEY, nonce.encode("ascii"), hashlib.sha256).hexdigest()[:8]


def is_our_fence(fence: str) -> bool:
    """Whether this process drew `fence` (`new_fence`): its tag matches its nonce."""
    if len(fence) != 16:
        return False
    return hmac.compare_digest(_tag(fence[:8]), fence[8:])


def result_text(value: Any, limit: int = MAX_RESULT_CHARS) -> str:
    """Text for any tool output: strings as they are, blocks by their text, the rest as JSON."""
    return result_text_cut(value, limit)[0]


def result_text_cut(value: Any, limit: int = MAX_RESULT_CHARS) -> tuple[str, int]:
    """`result_text`, and how many characters were cut (0: none)."""
    text = _as_text(value, depth=0)
    if len(text) > limit:
        return text[:limit] + f"\n[... {len(text) - limit} more characters cut by stretto]", len(text) - limit
    return text, 0


def _as_text(value: Any, depth: int) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    if depth > 3:
        return _dumps(value)
    text = getattr(value, "text", None)
    if isinstance(text, str) and not isinstance(value, dict):
        return text  # an MCP TextContent or an SDK's text block
    if isinstance(value, dict) and value.get("type") == "text" and isinstance(value.get("text"), str):
        return value["text"]
    if isinstance(value, dict) and isinstance(value.get("content"), list) and set(value) <= {
            "content", "isError", "is_error", "structuredContent", "structured_content", "meta", "_meta"}:
        return _blocks_text(value["content"], depth)  # an MCP CallToolResult as a dict
    content = getattr(value, "content", None)
    if isinstance(content, list) and hasattr(value, "is_error"):
        return _blocks_text(content, depth)  # an MCP CallToolResult object
    if isinstance(value, (list, tuple)) and value and all(_is_block(v) for v in value):
        return _blocks_text(list(value), depth)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return _dumps(dump(mode="json"))
        except Exception:  # noqa: BLE001 - a model that cannot dump itself is shown as text
            return str(value)
    return _dumps(value)


def _is_block(value: Any) -> bool:
    if isinstance(value, dict):
        return isinstance(value.get("type"), str)
    return hasattr(value, "type") and (hasattr(value, "text") or hasattr(value, "data"))


def _blocks_text(blocks: list[Any], depth: int) -> str:
    parts = []
    for block in blocks:
        text = block.get("text") if isinstance(block, dict) else getattr(block, "text", None)
        if isinstance(text, str):
            parts.append(text)
        else:
            kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", "?")
            parts.append(f"[{kind} content]")
    return "\n".join(parts)


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str, sort_keys=False)
    except (ValueError, TypeError, RecursionError):
        return str(value)


def is_error_result(value: Any) -> bool:
    """Whether an output says it is an error (MCP's `isError`, an SDK's `is_error`)."""
    if isinstance(value, dict):
        return bool(value.get("isError") or value.get("is_error"))
    return bool(renamed_field(value, "is_error", "isError", False))


def fenced_appendix(lookups: Sequence[Lookup], fence: str) -> str:
    """The text appended to the agent's result: each lookup's call and result, inside the fence.

    Every entry starts with `[stretto <fence>]`; a result's own lines that start like stretto's
    markers are escaped, so no tool result can pass for an entry stretto made.
    """
    if not lookups:
        return ""
    mark = f"[stretto {fence}]"
    parts = ["", f"{mark} {APPENDIX_TITLE}"]
    for lk in lookups:
        args = _arguments_json(lk.arguments)
        status = " (failed)" if lk.error else ""
        parts.append(f"{mark} {lk.tool} {args}{status}:")
        parts.append(_escape(lk.content, fence))
    parts.append(f"{mark} end")
    return "\n".join(parts)


def _arguments_json(arguments: Any) -> str:
    """`json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)`, the same text
    (written directly for flat arguments: the proxy appends a lookup to every call)."""
    if isinstance(arguments, dict):
        flat = flat_json(arguments, item=", ", key=": ", ascii=False)
        if flat is not None:
            return flat
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


def _escape(content: str, fence: str) -> str:
    return content.replace("[stretto ", "[stretto\u200b ").replace(fence, fence[:4] + "\u200b" + fence[4:])


@dataclass(frozen=True)
class AppendedLookup:
    """One lookup as the agent sees it inside a result: what a scripted agent or a test reads."""

    tool: str
    arguments: dict[str, Any]
    content: str
    failed: bool


_ENTRY = re.compile(r"^\[stretto (?P<fence>[0-9a-f]{8}|[0-9a-f]{16})\] (?P<tool>[^\s{]+) (?P<args>\{.*\})(?P<failed> \(failed\))?:$")


def parse_appendix(text: str) -> list[AppendedLookup]:
    """The lookups stretto appended to a result's text, in order (the inverse of `fenced_appendix`)."""
    lines = text.split("\n")
    found: list[AppendedLookup] = []
    current: dict[str, Any] | None = None
    body: list[str] = []
    fence = None
    for line in lines:
        match = _ENTRY.match(line)
        closing = fence is not None and line == f"[stretto {fence}] end"
        if (match and (fence is None or match["fence"] == fence)) or closing:
            if current is not None:
                found.append(AppendedLookup(current["tool"], current["args"], _unescape("\n".join(body), fence or ""),
                                            current["failed"]))
            current, body = None, []
            if closing:
                fence = None
                continue
            assert match is not None
            try:
                args = json.loads(match["args"])
            except ValueError:
                continue
            fence = match["fence"]
            current = {"tool": match["tool"], "args": args, "failed": bool(match["failed"])}
        elif current is not None:
            body.append(line)
    return found


_END = re.compile(r"\[stretto (?P<fence>[0-9a-f]{8}|[0-9a-f]{16})\] end$")


def split_appendix(text: str, fence: str | None = None) -> tuple[str, list[AppendedLookup]]:
    """A result as an agent reads it: the tool's own text, and the lookups stretto appended.

    The appendix is the end of the text, from the title line in the fence its closing line
    names, and only in a fence stretto drew: `fence` when given, else one this process drew
    (`is_our_fence`). A tool's own text cannot move it, nor pass an appendix of its own for
    stretto's: it would have to forge the fence's tag. Anything else is the tool's own text."""
    end = _END.search(text)
    if end is None:
        return text, []
    if (fence is not None and end["fence"] != fence) or (fence is None and not is_our_fence(end["fence"])):
        return text, []
    start = text.rfind(f"\n[stretto {end['fence']}] {APPENDIX_TITLE}\n")
    if start < 0:
        return text, []
    return text[:start], parse_appendix(text[start:])


def _unescape(content: str, fence: str) -> str:
    content = content.replace("[stretto\u200b ", "[stretto ")
    return content.replace(fence[:4] + "\u200b" + fence[4:], fence) if fence else content
