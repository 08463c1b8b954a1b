"""The agent's own tools: which ones ADK says are reads, and how stretto calls one for a lookup.

Authority. ADK carries a read/write hint only on MCP tools (`McpTool.raw_mcp_tool.annotations`,
`readOnlyHint` / `destructiveHint`); those become a per-session `ToolManifest`, with each tool's
input contract from its JSON schema. Plain function tools carry none, so they are reads only if
the plugin was told so (`reads=[...]` or a manifest). A tool of unknown kind is never looked up.

Calling. A lookup runs the sibling tool the agent itself has at this step (ADK's resolution of
the step's tools, else `agent.canonical_tools(...)`) through `tool.run_async(args=...,
tool_context=...)`, with a tool context of its own (its own call id and actions), so nothing a
lookup does can leak into the agent's call. A tool that asks for the user's confirmation, or
runs long, is never called for a lookup. A sync function tool runs on a daemon thread of
stretto's own (`serve/workers.py`), so one that hangs is abandoned at stretto's timeout instead of
blocking the event loop, and never keeps the process alive.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from typing import Any, Iterable

from stretto_core import ToolManifest, manifest_from_mcp_tools
from stretto_core.sessions.renamed import renamed_field
from stretto_core.serve.workers import in_worker

from stretto_adk.convert import error_message

log = logging.getLogger("stretto.adk")

AUTHORITY_TIMEOUT = 10.0
"""Seconds stretto waits for the agents' tools to resolve (an MCP `tools/list`) at a session's start."""

def mcp_manifest(tools: Iterable[Any]) -> ToolManifest:
    """What MCP annotations say of these ADK tools, under the names the model sees them by."""
    return _named_manifest((tool.name, tool) for tool in tools)


def _named_manifest(tools: Iterable[tuple[str, Any]]) -> ToolManifest:
    listed = []
    for name, tool in tools:
        try:
            raw = tool.raw_mcp_tool
        except AttributeError:
            continue  # not an MCP tool: no annotation to read
        listed.append({"name": name, "annotations": getattr(raw, "annotations", None),
                       "inputSchema": renamed_field(raw, "input_schema", "inputSchema"),
                       "description": getattr(raw, "description", None)})
    return manifest_from_mcp_tools(listed)


def _agents(root: Any) -> list[Any]:
    seen: list[Any] = []
    stack = [root]
    while stack:
        agent = stack.pop()
        if agent is None or any(agent is a for a in seen):
            continue
        seen.append(agent)
        stack.extend(getattr(agent, "sub_agents", None) or [])
    return seen


async def session_authority(invocation_context: Any, timeout: float = AUTHORITY_TIMEOUT) -> ToolManifest:
    """The MCP annotations of every agent's tools in this app, read at a session's start and
    again before each lookup round (so a tool re-annotated since is judged as it is now).

    A toolset that fails or takes longer than `timeout` contributes nothing, so its tools stay
    of unknown kind (never looked up).
    """
    from google.adk.agents.readonly_context import ReadonlyContext

    agent = getattr(invocation_context, "agent", None)
    root = getattr(agent, "root_agent", agent)
    tools: list[tuple[str, Any]] = []
    for each in _agents(root):
        if not hasattr(each, "canonical_tools"):
            continue
        try:
            tools.extend(await asyncio.wait_for(_listed_now(each, ReadonlyContext(invocation_context)), timeout))
        except Exception as exc:  # noqa: BLE001 - an unreachable toolset only loses its lookups
            log.warning("stretto: could not list the tools of agent %s (%s); none of them is looked up",
                        getattr(each, "name", "?"), exc)
    return _named_manifest(tools)


async def _listed_now(agent: Any, context: Any) -> list[tuple[str, Any]]:
    """An agent's tools by the names the model sees, each toolset listed afresh: ADK keeps a
    toolset's listing for a whole invocation (`get_tools_with_prefix`), which may be stale."""
    from google.adk.tools.base_tool import BaseTool
    from google.adk.tools.base_toolset import BaseToolset

    unions = getattr(agent, "tools", None)
    if not isinstance(unions, list):
        return [(tool.name, tool) for tool in await agent.canonical_tools(context)]
    named: list[tuple[str, Any]] = []
    for union in unions:
        if isinstance(union, BaseToolset):
            prefix = union.tool_name_prefix
            named.extend((f"{prefix}_{tool.name}" if prefix else tool.name, tool)
                         for tool in await union.get_tools(context))
        elif isinstance(union, BaseTool):
            named.append((union.name, union))
    return named


def model_name(agent: Any) -> str | None:
    """The agent's model, as its name (`gemini-2.5-flash`, or a BaseLlm's `model`)."""
    try:
        model = agent.canonical_model
    except Exception:  # noqa: BLE001 - a model that cannot resolve is simply not named
        model = getattr(agent, "model", None)
    if isinstance(model, str):
        return model or None
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name else None


def _is_sync(tool: Any) -> bool:
    func = getattr(tool, "func", None)
    if func is None:
        return False
    return not (inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func)
                or inspect.iscoroutinefunction(getattr(func, "__call__", None)))


class LookupCaller:
    """The `call_tool(name, args)` stretto's live session awaits for each lookup after one call.

    The step's tools are resolved on the first lookup only, so a call with no lookup costs nothing.
    """

    def __init__(self, tool_context: Any) -> None:
        self._tool_context = tool_context
        self._invocation: Any = None
        self._tools: dict[str, Any] | None = None

    async def _resolve(self) -> dict[str, Any]:
        if self._tools is None:
            self._invocation = self._tool_context.get_invocation_context()
            tools = self._invocation.canonical_tools_cache
            if tools is None:
                from google.adk.agents.readonly_context import ReadonlyContext

                tools = await self._invocation.agent.canonical_tools(ReadonlyContext(self._invocation))
            self._tools = {t.name: t for t in tools}
        return self._tools

    async def __call__(self, name: str, args: dict[str, Any]) -> Any:
        from google.adk.tools.tool_context import ToolContext

        tool = (await self._resolve()).get(name)
        if tool is None:
            return f"Error: the agent has no tool named {name} at this step", True
        if getattr(tool, "is_long_running", False):
            return f"Error: {name} runs long, so stretto does not call it", True
        context = ToolContext(self._invocation, function_call_id=f"stretto-{uuid.uuid4().hex[:12]}")
        if await tool.check_require_confirmation(args, context):
            return f"Error: {name} asks for the user's confirmation, so stretto does not call it", True
        if _is_sync(tool):  # on a daemon thread of stretto's own, in a loop of its own (serve/workers.py)
            value = await in_worker(lambda: tool.run_async(args=args, tool_context=context))
        else:
            value = await tool.run_async(args=args, tool_context=context)
        message = error_message(value)
        if message is not None:
            return message, True
        return value  # stretto reads any shape (str, dict, an MCP result) and its isError
