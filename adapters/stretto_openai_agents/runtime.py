"""One instrumented agent at run time: what the SDK shows becomes stretto's events and lookups.

Hooks call `model_asked`, `model_answered`, `tool_ended` and `run_ended`; the wrapped tools and
MCP servers call `after_call` / `after_mcp_call` with the result the agent asked for. Lookups are
made with the agent's own tools: a function tool's original `on_invoke_tool`, an MCP tool through
the SDK's own MCP invoker on the real server, each with a fresh `ToolContext` of the same run.
Nothing here raises into the agent: on any failure the agent's result goes back unchanged.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from agents import Agent, FunctionTool, ModelResponse, RunContextWrapper, __version__
from agents.tool_context import ToolContext
from agents.mcp import MCPUtil
from stretto_core import LiveSession, Stretto, ToolCall, ToolManifest, Usage, result_text
from stretto_core.serve.results import WHOLE
from stretto_core.serve.workers import in_worker
from stretto_core.sessions.renamed import renamed_field

from stretto_openai_agents.kinds import absent_reads, function_tool_manifest, listed_manifest, server_blocks_lookups
from stretto_openai_agents.options import StrettoOptions
from stretto_openai_agents.runs import RunState, Runs, conversation_of
from stretto_openai_agents.tracing import AgentsSpans
from stretto_openai_agents.views import (is_programmatic, model_view, parse_arguments, synthetic_call,
                                         view_text, with_appendix)

log = logging.getLogger("stretto.openai_agents")

HARNESS = "openai-agents"
FAILURE_FLAG = "_function_tool_default_failure_handled"
"""Set by the SDK on a tool context when its default error formatter turned an exception into text."""


def model_name(agent: Any, run_config: Any = None) -> str | None:
    """The model an agent runs on, as far as the SDK shows it (a run config's model wins; with
    none set, the SDK's default model)."""
    model = getattr(run_config, "model", None) or getattr(agent, "model", None)
    if model is None:
        from agents.models import get_default_model

        return get_default_model()
    if isinstance(model, str):
        return model
    return getattr(model, "model", None) or type(model).__name__


class AgentRuntime:
    """The core `Stretto` of one instrumented agent, its runs, and the tools it may look up."""

    def __init__(self, options: StrettoOptions, agent: Agent[Any]) -> None:
        self.options = options
        self.agent_name = agent.name
        self.core = Stretto(options.flow, harness=HARNESS, agent_model=options.agent_model or model_name(agent),
                            **options.core_kwargs())
        self.core.native_spans = AgentsSpans()
        self.runs = Runs(options.max_conversations)
        self.function_tools: list[FunctionTool] = []
        self.targets: dict[str, FunctionTool] = {}
        """Function tools stretto may call itself: their originals, by name."""

    @property
    def sessions(self) -> list[LiveSession]:
        """The latest sessions, oldest first."""
        return list(self.runs.recent)

    def close(self) -> None:
        """Close every open session (recording resumes by itself if a run goes on)."""
        self.runs.close_all()

    # -- sessions ------------------------------------------------------------------------------
    def live(self, run: RunState, ctx: RunContextWrapper[Any], agent: Any) -> LiveSession:
        """The run's session, made (or found, for a conversation) at the run's first event."""
        if run.live is not None:
            return run.live
        conversation = conversation_of(ctx, self.options.session_key)

        def make(session_id: str | None) -> LiveSession:
            tools = self._tools_of(run)
            run_config = getattr(ctx, "run_config", None)
            known = agent is not None or getattr(run_config, "model", None) is not None
            model = self.options.agent_model or (model_name(agent, run_config) if known else self.core.agent_model)
            return self.core.session(session_id, tools=tools, agent_model=model,
                                     labels={"agent": self.agent_name, "sdk": f"openai-agents {__version__}"})

        return self.runs.session(run, conversation, make)

    def listed(self, run_context: RunContextWrapper[Any] | None, server: Any, tools: Sequence[Any]) -> None:
        """An MCP server showed these tools to a run: they may be looked up in that run."""
        if run_context is None or getattr(run_context, "usage", None) is None:
            return
        run = self.runs.state(run_context)
        names = {tool.name for tool in tools}
        for name, (shown_by, _) in list(run.listed.items()):
            if shown_by is server and name not in names:
                del run.listed[name]  # no longer listed: no longer looked up
        for tool in tools:
            run.listed[tool.name] = (server, tool)
        self._refresh(run)

    def _tools_of(self, run: RunState) -> ToolManifest:
        """The run's tools: function tools by their annotations, MCP tools as last listed."""
        present = [t.name for t in self.function_tools] + list(run.listed)
        return (function_tool_manifest(self.function_tools).merged(listed_manifest(run.listed))
                .merged(absent_reads(self.core.authority, present)))

    def _refresh(self, run: RunState) -> None:
        """Take the run's latest listing into its session's guard, from the next decision on."""
        if run.live is not None:
            run.live.update_tools(self._tools_of(run))

    # -- what the hooks show ---------------------------------------------------------------------
    def model_asked(self, ctx: RunContextWrapper[Any], agent: Any, input_items: Any) -> None:
        """Before a model call: the run's new user messages, on its first call."""
        run = self.runs.state(ctx)
        live = self.live(run, ctx, agent)
        if run.asked:
            return
        run.asked = True
        for text in trailing_user_texts(input_items):
            live.user(text)

    def model_answered(self, ctx: RunContextWrapper[Any], agent: Any, response: ModelResponse) -> None:
        """After a model call: its text, its function calls and its token usage."""
        run = self.runs.state(ctx)
        text, calls = turn_of(response.output)
        u = response.usage
        usage = Usage(input_tokens=getattr(u, "input_tokens", None), output_tokens=getattr(u, "output_tokens", None))
        self.live(run, ctx, agent).llm_turn(text, calls, usage)

    async def tool_ended(self, ctx: Any, tool: Any, result: Any) -> None:
        """A tool result no wrapper took (needs approval, schema output, failed MCP call): record it."""
        if not isinstance(ctx, ToolContext):
            return
        run = self.runs.state(ctx)
        if ctx.tool_call_id in run.recorded:
            return
        run.recorded.add(ctx.tool_call_id)
        text = view_text(model_view(result, ctx.tool_call))
        await self.live(run, ctx, ctx.agent).after_tool(
            ctx.tool_call_id, ctx.tool_name, parse_arguments(ctx.tool_arguments), text, _no_lookup, serve=False)

    def run_ended(self, ctx: RunContextWrapper[Any]) -> None:
        """The agent gave its final output: release the session file until the next event."""
        run = self.runs.state(ctx)
        if run.live is not None:
            run.live.close()

    # -- a result the agent asked for ------------------------------------------------------------
    async def after_call(self, ctx: Any, input_json: str, output: Any, deadline: float | None) -> Any:
        """A function tool's result: record it, make the lookups, return it with their appendix."""
        if not isinstance(ctx, ToolContext):
            return output
        try:
            run = self.runs.state(ctx)
            live = self.live(run, ctx, ctx.agent)
            view = model_view(output, ctx.tool_call)
            run.recorded.add(ctx.tool_call_id)
            serve = not is_programmatic(ctx.tool_call) and await self._relisted(ctx, run)
            appendix = await live.after_tool(
                ctx.tool_call_id, ctx.tool_name, parse_arguments(input_json), view_text(view),
                self.caller(ctx, run, deadline), error=self.is_error(ctx, output), serve=serve)
            return with_appendix(output, view, appendix) if appendix else output
        except Exception as exc:  # noqa: BLE001 - the agent's own result always goes back
            log.warning("stretto: serving after %s failed and was skipped: %s", getattr(ctx, "tool_name", "?"), exc)
            return output

    async def after_mcp_call(self, ctx: ToolContext[Any], server: Any, result: Any) -> Any:
        """An MCP tool's result (a `CallToolResult`): the same, the appendix as one more text block."""
        try:
            from mcp.types import TextContent

            run = self.runs.state(ctx)
            live = self.live(run, ctx, ctx.agent)
            structured = renamed_field(result, "structured_content", "structuredContent")
            failed = bool(renamed_field(result, "is_error", "isError", False))
            exclusive = bool(getattr(server, "use_structured_content", False) and structured and not failed)
            text = json.dumps(structured) if exclusive else result_text(result, WHOLE)
            run.recorded.add(ctx.tool_call_id)
            serve = not exclusive and await self._relisted(ctx, run)
            appendix = await live.after_tool(
                ctx.tool_call_id, ctx.tool_name, parse_arguments(ctx.tool_arguments), text,
                self.caller(ctx, run, None), error=failed, serve=serve)
            if not appendix:
                return result
            block = TextContent(type="text", text=appendix.lstrip("\n"))
            return result.model_copy(update={"content": [*result.content, block]})
        except Exception as exc:  # noqa: BLE001
            log.warning("stretto: serving after MCP tool %s failed and was skipped: %s", ctx.tool_name, exc)
            return result

    # -- lookups ---------------------------------------------------------------------------------
    def caller(self, ctx: ToolContext[Any], run: RunState, deadline: float | None):  # noqa: ANN201
        """The `call_tool` the core makes lookups with: this run's tools, within the tool's own timeout."""

        async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise asyncio.TimeoutError()
            made = self._call(ctx, run, name, arguments)
            return await (made if left is None else asyncio.wait_for(made, left))

        return call_tool

    async def _call(self, ctx: ToolContext[Any], run: RunState, name: str, arguments: dict[str, Any]) -> Any:
        tool = self.targets.get(name) or self._mcp_target(run, name, ctx.agent)
        if tool is None:
            raise LookupError(f"{name} is not a tool stretto may call for this agent")
        if not await _enabled(tool, ctx):
            raise PermissionError(f"{name} is not enabled for this run")
        text = json.dumps(arguments, ensure_ascii=False)
        call_id = "stretto-" + uuid.uuid4().hex[:16]
        fresh = ToolContext.from_agent_context(ctx, call_id, synthetic_call(call_id, name, text), ctx.agent,
                                               tool_name=name, tool_arguments=text, run_config=ctx.run_config)
        value = await _invoke(tool, fresh, text)
        if value is None or isinstance(value, (bytes, bytearray, memoryview)):
            return f"Error: {name} returned {type(value).__name__}, not text", True
        return view_text(model_view(value, fresh.tool_call)), self.is_error(fresh, value)

    def is_error(self, ctx: ToolContext[Any], output: Any) -> bool:
        """Whether a function tool's result is an error: the SDK formatted an exception, or
        the `error_results` option says so."""
        if getattr(ctx, FAILURE_FLAG, False):
            return True
        judge = self.options.error_results
        if judge is None:
            return False
        try:
            return bool(judge(ctx, output))
        except Exception as exc:  # noqa: BLE001 - a broken judge never breaks the call
            log.warning("stretto: error_results failed (%s); the result counts as no error", exc)
            return False

    async def _relisted(self, ctx: ToolContext[Any], run: RunState) -> bool:
        """Before a lookup round, read the run's MCP servers' listings again (the SDK's cache
        emptied), so the engine decides on the tools as they are now. False when a listing
        cannot be read within the lookup timeout: no lookup after this call then."""
        live = run.live
        if live is None or live.engine_session is None or live.shadow:
            return True
        servers = list({id(server): server for server, _ in run.listed.values()}.values())
        try:
            for server in servers:
                server.inner.invalidate_tools_cache()
                await asyncio.wait_for(server.list_tools(ctx, ctx.agent), max(self.core.limits.lookup_timeout, 0.05))
        except Exception as exc:  # noqa: BLE001 - no fresh listing, no lookup
            log.warning("stretto: an MCP server's tools could not be listed again (%s); no lookup after "
                        "%s", type(exc).__name__ if not str(exc) else exc, ctx.tool_name)
            return False
        return True

    def _mcp_target(self, run: RunState, name: str, agent: Any) -> FunctionTool | None:
        """The SDK's own function tool for an MCP tool this run was shown, on the real server."""
        listed = run.listed.get(name)
        if listed is None:
            return None
        proxy, tool = listed
        if server_blocks_lookups(proxy.inner, tool.name):
            return None
        return MCPUtil.to_function_tool(tool, proxy.inner, False, agent)


SYNC_TOOL_MARK = "__agents_sync_function_tool__"
"""What the SDK sets on a `function_tool` of a sync function (whose call it hands to the loop's
default executor, the agent's own tools' threads)."""


async def _invoke(tool: FunctionTool, ctx: ToolContext[Any], text: str) -> Any:
    """Call a tool for a lookup, within its own timeout. A sync function tool runs in a loop of
    stretto's own on a daemon thread (`serve/workers.py`), so one that never returns takes none of
    the agent's threads and keeps no process alive; an async one (an MCP server's) stays on the
    agent's loop, where its session lives."""

    async def invoke() -> Any:
        invoked = tool.on_invoke_tool(ctx, text)
        return await (asyncio.wait_for(invoked, tool.timeout_seconds) if tool.timeout_seconds else invoked)

    if getattr(tool.on_invoke_tool, SYNC_TOOL_MARK, False) or getattr(tool, SYNC_TOOL_MARK, False):
        return await in_worker(invoke)
    return await invoke()


async def _no_lookup(name: str, arguments: dict[str, Any]) -> Any:
    raise RuntimeError("no lookup is made after a result stretto cannot append to")


async def _enabled(tool: FunctionTool, ctx: ToolContext[Any]) -> bool:
    flag = tool.is_enabled
    if isinstance(flag, bool):
        return flag
    value = flag(ctx, ctx.agent)  # type: ignore[arg-type]
    return bool(await value) if inspect.isawaitable(value) else bool(value)


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [_get(p, "text") for p in content or ()]
    return "\n".join(p for p in parts if isinstance(p, str))


def trailing_user_texts(items: Any) -> list[str]:
    """The user messages at the end of a model input: the new ones (history comes before them)."""
    if isinstance(items, str):
        return [items]
    texts: list[str] = []
    for item in reversed(list(items or ())):
        role = _get(item, "role")
        if role == "user" and _get(item, "type") in (None, "message"):
            texts.append(_content_text(_get(item, "content")))
        elif role not in ("system", "developer"):
            break
    return texts[::-1]


def turn_of(output: Sequence[Any]) -> tuple[str, list[ToolCall]]:
    """A model response's text and function calls."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for item in output:
        kind = _get(item, "type")
        if kind == "message":
            texts.extend(t for p in _get(item, "content") or () if isinstance(t := _get(p, "text"), str))
        elif kind == "function_call":
            calls.append(ToolCall(call_id=_get(item, "call_id"), tool=_get(item, "name"),
                                  arguments=parse_arguments(_get(item, "arguments"))))
    return "\n".join(texts), calls
