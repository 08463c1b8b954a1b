"""Between LangChain messages and stretto's events: text out of content, lookups into a result.

A message's `content` is a string or a list of blocks (strings or dicts with a `type`). The
agent's ToolMessage keeps its own shape when lookups are appended: text is added to a string,
and a list gets one more text block, so nothing already in the result is touched.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from stretto_core import ToolCall, Usage


def content_text(content: Any) -> str:
    """The text of a message's content: a string as it is, text blocks joined, others named."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, dict):
                parts.append(f"[{block.get('type', '?')} content]")
        return "\n".join(parts)
    return "" if content is None else str(content)


def tool_outcome(message: Any) -> tuple[str, bool]:
    """What a tool call came back with, as (text, is_error); anything but a ToolMessage is an error."""
    if isinstance(message, ToolMessage):
        return content_text(message.content), message.status == "error"
    kind = type(message).__name__
    return f"Error: the tool came back with a {kind}, not a ToolMessage; nothing of it is used", True


def with_appendix(message: ToolMessage, appendix: str) -> ToolMessage:
    """A copy of the agent's ToolMessage with stretto's lookups appended inside it."""
    if not appendix:
        return message
    content = message.content
    if isinstance(content, list):
        new: Any = [*content, {"type": "text", "text": appendix.lstrip("\n")}]
    else:
        new = content_text(content) + appendix
    return message.model_copy(update={"content": new})


def answered_calls(state: Any) -> list[str]:
    """The calls of the latest model turn whose results the state already holds."""
    messages = state.get("messages") if isinstance(state, dict) else None
    answered: list[str] = []
    for message in reversed(messages or ()):
        if not isinstance(message, ToolMessage):
            break
        answered.append(message.tool_call_id)
    return answered


def turn_calls(message: AIMessage) -> list[ToolCall]:
    """The tool calls of a model turn, as stretto records them."""
    calls = []
    for call in message.tool_calls or ():
        call_id = call.get("id") or ""
        args = call.get("args")
        calls.append(ToolCall(call_id=call_id, tool=call.get("name", ""),
                              arguments=dict(args) if isinstance(args, dict) else {}))
    return calls


def turn_usage(message: AIMessage) -> Usage | None:
    """The tokens of a model turn, from `usage_metadata` when the model reported it."""
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None
    return Usage(input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"))


def model_name(model: Any) -> str | None:
    """The name a chat model goes by (`model_name`, `model`, `model_id`), else its `_llm_type`."""
    for attr in ("model_name", "model", "model_id"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    try:
        kind = model._llm_type  # noqa: SLF001 - LangChain's own name for a model class
    except Exception:  # noqa: BLE001
        return None
    return kind if isinstance(kind, str) else None
