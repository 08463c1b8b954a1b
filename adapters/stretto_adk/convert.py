"""ADK's shapes to stretto's and back: user content, model responses, usage, tool results.

Pure functions with no ADK import at module level, so they are cheap to test and to call on
every callback. The one thing that goes back into ADK is the tool result with the lookups
added: a str result has the text appended (ADK would wrap it as `{"result": ...}` anyway), a
dict result keeps every key of the tool's own and gains one more (`stretto_lookups` by default),
anything else is wrapped as `{"result": value, <key>: text}`.
"""

from __future__ import annotations

from typing import Any, Iterable

from stretto_core import ToolCall, Usage

RESULT_KEY = "stretto_lookups"
"""The key a dict result gets for the lookups' text; the tool's own keys are never touched."""


def content_text(content: Any) -> str | None:
    """The text a user (or model) wrote in a `types.Content`, or None when it has no text part.

    Thoughts are left out: they are the model's scratch, not what it said.
    """
    parts = getattr(content, "parts", None) or []
    texts = [p.text for p in parts if isinstance(getattr(p, "text", None), str) and not getattr(p, "thought", False)]
    return "".join(texts) if texts else None


def function_calls(response: Any) -> list[Any]:
    """The `types.FunctionCall`s of a model response, in order."""
    parts = getattr(getattr(response, "content", None), "parts", None) or []
    return [p.function_call for p in parts if getattr(p, "function_call", None) is not None]


def fill_missing_call_ids(calls: Iterable[Any], new_id: Any) -> None:
    """Give each call without an id one, as ADK itself does a moment later (so they agree)."""
    for call in calls:
        if not call.id:
            call.id = new_id()


def turn_calls(calls: Iterable[Any]) -> list[ToolCall]:
    """ADK function calls as stretto's `ToolCall`s."""
    return [ToolCall(call_id=str(c.id), tool=str(c.name or ""), arguments=dict(c.args or {})) for c in calls]


def turn_usage(metadata: Any) -> Usage | None:
    """`usage_metadata` as stretto's `Usage`: prompt tokens in; answer plus thinking tokens out."""
    if metadata is None:
        return None
    prompt = getattr(metadata, "prompt_token_count", None)
    answer = getattr(metadata, "candidates_token_count", None)
    thoughts = getattr(metadata, "thoughts_token_count", None)
    out = None if answer is None and thoughts is None else (answer or 0) + (thoughts or 0)
    if prompt is None and out is None:
        return None
    return Usage(input_tokens=prompt, output_tokens=out)


def error_message(result: Any) -> str | None:
    """The message of a result in ADK's own shape of a failed call, `{"error": "..."}`, else None.

    ADK's function and MCP tools answer a failed call so (missing arguments, a server error, a
    refused confirmation). A dict that merely has an `error` key among others is data, as ADK's
    observability plugins read it; MCP's `isError` is read by stretto itself.
    """
    if isinstance(result, dict) and len(result) == 1 and "error" in result and result["error"]:
        value = result["error"]
        return value if isinstance(value, str) else str(value)
    return None


def with_appendix(result: Any, text: str, key: str = RESULT_KEY) -> dict[str, Any]:
    """The tool's result with the lookups' text added, as a new dict (the tool's own is not changed)."""
    if isinstance(result, str):
        return {"result": result + text}
    body = text.lstrip("\n")
    if isinstance(result, dict):
        free = key
        n = 1
        while free in result:  # a tool that uses the key itself keeps it
            n += 1
            free = f"{key}_{n}"
        return {**result, free: body}
    return {"result": result, key: body}
