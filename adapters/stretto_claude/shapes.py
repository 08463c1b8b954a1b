"""Put stretto's appendix inside a tool's result, in that tool's own output shape.

A PostToolUse hook replaces a result by returning it whole, and the CLI keeps the original when
the replacement does not fit the tool's output shape, silently. So the appendix goes where each
shape has room for text: a new text block after an MCP tool's content blocks
(`updatedMCPToolOutput`), the end of a string, the end of Bash's `stdout`. A shape with no such
place gets the appendix as `additionalContext`, which the model reads right after the result.
"""

from __future__ import annotations

import copy
from typing import Any

EVENT = "PostToolUse"


def _block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text.lstrip("\n")}


def _is_blocks(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in value)


def augmented_output(tool_response: Any, appendix: str, *, mcp: bool) -> dict[str, Any]:
    """The hook's answer that shows the model `tool_response` followed by `appendix`."""
    if not appendix:
        return {}
    key = "updatedMCPToolOutput" if mcp else "updatedToolOutput"
    if _is_blocks(tool_response):
        return _answer(key, [copy.copy(b) for b in tool_response] + [_block(appendix)])
    if isinstance(tool_response, dict) and _is_blocks(tool_response.get("content")):
        updated = dict(tool_response)
        updated["content"] = [copy.copy(b) for b in tool_response["content"]] + [_block(appendix)]
        return _answer(key, updated)
    if isinstance(tool_response, str):
        return _answer(key, tool_response + appendix)
    if isinstance(tool_response, dict) and isinstance(tool_response.get("stdout"), str):
        updated = dict(tool_response)
        updated["stdout"] = tool_response["stdout"] + appendix
        return _answer("updatedToolOutput", updated)
    return additional_context(EVENT, appendix)


def shown_text(tool_response: Any) -> Any:
    """What the model reads of a result, for the record: Bash's streams as text; other shapes as
    they are (the recorder turns blocks, strings and JSON into text itself)."""
    if isinstance(tool_response, dict) and isinstance(tool_response.get("stdout"), str):
        stderr = tool_response.get("stderr")
        return tool_response["stdout"] + ("\n" + stderr if isinstance(stderr, str) and stderr else "")
    return tool_response


def additional_context(event: str, appendix: str) -> dict[str, Any]:
    """The appendix as context the model reads after the result (for shapes with no room)."""
    if not appendix:
        return {}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": appendix.lstrip("\n")}}


def _answer(key: str, value: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": EVENT, key: value}}
