"""What the model sees of a tool's output, and the same output with stretto's appendix inside it.

The SDK turns a function tool's return value into the model's input with
`ItemHelpers.tool_call_output_item`: a string stays a string, the structured outputs
(`ToolOutputText`, `ToolOutputImage`, ..., or a list of them) become a list of input parts, and
anything else is `str()`-ed. stretto records that same text and appends its lookups in the same
shape: text after text, or one more `ToolOutputText` part after the parts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agents import ItemHelpers, ToolOutputText
from openai.types.responses import ResponseFunctionToolCall


def synthetic_call(call_id: str, tool: str, arguments: str) -> ResponseFunctionToolCall:
    """A function call item, for the SDK helpers that need one."""
    return ResponseFunctionToolCall(call_id=call_id, name=tool, arguments=arguments, type="function_call")


def model_view(output: Any, tool_call: ResponseFunctionToolCall | None) -> str | list[Any]:
    """The `output` field the model receives for this return value (a string or input parts)."""
    call = tool_call if tool_call is not None else synthetic_call("stretto-view", "tool", "{}")
    try:
        return ItemHelpers.tool_call_output_item(call, output)["output"]
    except Exception:  # noqa: BLE001 - a value the SDK itself cannot convert is shown as text
        return str(output)


def view_text(view: str | list[Any]) -> str:
    """The text of a model view: the parts' text joined, other parts named by their type."""
    if isinstance(view, str):
        return view
    parts = []
    for part in view:
        kind = part.get("type") if isinstance(part, Mapping) else getattr(part, "type", None)
        text = part.get("text") if isinstance(part, Mapping) else getattr(part, "text", None)
        parts.append(text if isinstance(text, str) else f"[{kind} content]")
    return "\n".join(parts)


def with_appendix(output: Any, view: str | list[Any], appendix: str) -> Any:
    """`output` as the tool's return value with `appendix` inside it, in the shape the model sees."""
    if isinstance(view, str):
        return view + appendix
    items = list(output) if isinstance(output, (list, tuple)) else [output]
    return [*items, ToolOutputText(text=appendix.lstrip("\n"))]


def is_programmatic(tool_call: Any) -> bool:
    """A call made by a hosted program, not the model: its output goes back to that program."""
    caller = tool_call.get("caller") if isinstance(tool_call, Mapping) else getattr(tool_call, "caller", None)
    kind = caller.get("type") if isinstance(caller, Mapping) else getattr(caller, "type", None)
    return kind == "program"


def parse_arguments(text: str | None) -> dict[str, Any]:
    """A call's JSON arguments as a dict (`{}` for none; the raw text kept when it is not an object)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_raw": text}
