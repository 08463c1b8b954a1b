"""Make a lookup the way the agent makes its calls: through the same handler, with the same context.

A lookup is the agent's own tool call request with another tool and call in it: the same state,
runtime, store, context and config, sent down the same handler (so the tool node's injection,
validation and error handling apply to it as to the agent's call). It gets its own call id,
which never reaches the agent's messages: only its text does, inside the agent's result.
A lookup of a sync tool runs on a daemon thread of stretto's own, never the agent's (`is_sync_tool`).
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime

from stretto_core.serve.workers import in_worker
from stretto_langgraph.messages import tool_outcome

AsyncHandler = Callable[[ToolCallRequest], Awaitable[Any]]
SyncHandler = Callable[[ToolCallRequest], Any]


def siblings_of(request: ToolCallRequest, extra: Sequence[Any] = ()) -> dict[str, Any]:
    """The tools a lookup may go to: the tool node's own (`runtime.tools`), then any given."""
    tools: dict[str, Any] = {}
    for tool in (*extra, *(getattr(request.runtime, "tools", None) or ())):
        name = getattr(tool, "name", None)
        if isinstance(name, str):
            tools[name] = tool
    return tools


def lookup_request(request: ToolCallRequest, tool: Any, name: str, arguments: Mapping[str, Any]) -> ToolCallRequest:
    """The agent's request, turned into a call of `tool` with `arguments` under a new call id."""
    call_id = f"stretto-{uuid.uuid4().hex[:16]}"
    call = {"name": name, "args": dict(arguments), "id": call_id, "type": "tool_call"}
    runtime = request.runtime
    if isinstance(runtime, ToolRuntime):
        runtime = replace(runtime, tool_call_id=call_id)
    return replace(request, tool_call=call, tool=tool, runtime=runtime)


def _sibling(tools: Mapping[str, Any], name: str) -> Any:
    tool = tools.get(name)
    if tool is None:
        raise LookupError(f"no tool named {name!r} in this tool node")
    return tool


def is_sync_tool(tool: Any) -> bool:
    """A tool with no coroutine of its own: its async call runs the sync function on the running
    loop's default executor, where one that never returns would hold a thread the agent's own
    tools need, and which `asyncio.run` joins at its end. Such a lookup runs in a loop of stretto's
    own on a daemon thread (`serve/workers.py`) instead."""
    from langchain_core.tools import BaseTool, StructuredTool

    if isinstance(tool, StructuredTool):
        return tool.coroutine is None
    return isinstance(tool, BaseTool) and type(tool)._arun is BaseTool._arun


def async_call_tool(request: ToolCallRequest, handler: AsyncHandler,
                    extra: Sequence[Any] = ()) -> Callable[[str, dict[str, Any]], Awaitable[tuple[str, bool]]]:
    """The lookup function `LiveSession.after_tool` awaits."""

    async def call_tool(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        tool = _sibling(siblings_of(request, extra), name)
        sub = lookup_request(request, tool, name, arguments)
        if is_sync_tool(tool):  # LangChain would hand it to the agent's loop's default executor
            return tool_outcome(await in_worker(lambda: handler(sub)))
        return tool_outcome(await handler(sub))

    return call_tool


def sync_call_tool(request: ToolCallRequest, handler: SyncHandler,
                   extra: Sequence[Any] = ()) -> Callable[[str, dict[str, Any]], tuple[str, bool]]:
    """The lookup function `LiveSession.after_tool_sync` calls (from a worker thread, so each call
    runs in a copy of the agent's context: LangGraph's config and runtime variables included)."""
    context = contextvars.copy_context()

    def call_tool(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        sub = lookup_request(request, _sibling(siblings_of(request, extra), name), name, arguments)
        return tool_outcome(context.copy().run(handler, sub))

    return call_tool
