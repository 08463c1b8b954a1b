"""MCP servers: stretto wraps the server's `call_tool`, since MCP tools are built anew each run.

`StrettoMCPServer` stands in for one of the agent's `MCPServer`s and passes everything through
to it (connect it, or the original, as usual; both are the same connection). It changes two
things. `list_tools` notes which tools a run was shown, with their annotations (`readOnlyHint`
makes a read). `call_tool` appends stretto's lookups to the result as one more text block.

To know which run and which call a `call_tool` belongs to, the server's `tool_meta_resolver`
(which the SDK calls with the call's `ToolContext` right before `call_tool`) adds a one-time
token to the call's `_meta`; `call_tool` takes the token out again before the real server sees
the request. A call without the token (made outside a run) passes through untouched.
"""

from __future__ import annotations

import inspect
import threading
import uuid
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from agents.mcp import MCPServer

if TYPE_CHECKING:
    from stretto_openai_agents.runtime import AgentRuntime

META_KEY = "io.stretto/call"
PENDING_LIMIT = 4096
"""Tokens handed out and not yet used are forgotten beyond this many (oldest first)."""


class StrettoMCPServer(MCPServer):
    """An `MCPServer` whose tool results carry stretto's lookups; everything else is `inner`'s."""

    def __init__(self, inner: MCPServer, runtime: AgentRuntime) -> None:  # noqa: D107 - no super(): all state is inner's
        self.__dict__["inner"] = inner
        self.__dict__["_runtime"] = runtime
        self.__dict__["_pending"] = OrderedDict()
        self.__dict__["_lock"] = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "_runtime", "_pending", "_lock"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.inner, name, value)

    # -- the two changes -------------------------------------------------------------------------
    async def list_tools(self, run_context: Any = None, agent: Any = None) -> list[Any]:
        tools = await self.inner.list_tools(run_context, agent)
        try:
            self._runtime.listed(run_context, self, tools)
        except Exception:  # noqa: BLE001 - an unnoted listing only means no lookups of these tools
            pass
        return tools

    async def call_tool(self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None) -> Any:
        ctx, meta = self._claim(meta)
        if meta is None:
            result = await self.inner.call_tool(tool_name, arguments)
        else:
            result = await self.inner.call_tool(tool_name, arguments, meta=meta)
        if ctx is None:
            return result
        return await self._runtime.after_mcp_call(ctx, self.inner, result)

    @property
    def tool_meta_resolver(self) -> Any:
        inner_resolver = getattr(self.inner, "tool_meta_resolver", None)

        async def resolve(meta_context: Any) -> dict[str, Any] | None:
            meta = inner_resolver(meta_context) if inner_resolver is not None else None
            if inspect.isawaitable(meta):
                meta = await meta
            token = uuid.uuid4().hex
            with self._lock:
                self._pending[token] = meta_context.run_context
                while len(self._pending) > PENDING_LIMIT:
                    self._pending.popitem(last=False)
            return {**(meta or {}), META_KEY: token}

        return resolve

    @tool_meta_resolver.setter
    def tool_meta_resolver(self, value: Any) -> None:
        self.inner.tool_meta_resolver = value

    def _claim(self, meta: dict[str, Any] | None) -> tuple[Any, dict[str, Any] | None]:
        """The tool context a token in `meta` stands for, and `meta` without it."""
        if not meta or META_KEY not in meta:
            return None, meta
        rest = {k: v for k, v in meta.items() if k != META_KEY}
        with self._lock:
            ctx = self._pending.pop(meta[META_KEY], None)
        return ctx, rest or None

    # -- everything else is the real server's ---------------------------------------------------
    async def connect(self) -> None:
        await self.inner.connect()

    async def cleanup(self) -> None:
        await self.inner.cleanup()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def cached_tools(self) -> Any:
        return self.inner.cached_tools

    async def list_prompts(self) -> Any:
        return await self.inner.list_prompts()

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return await self.inner.get_prompt(name, arguments)

    async def list_resources(self, cursor: str | None = None) -> Any:
        return await self.inner.list_resources(cursor)

    async def list_resource_templates(self, cursor: str | None = None) -> Any:
        return await self.inner.list_resource_templates(cursor)

    async def read_resource(self, uri: str) -> Any:
        return await self.inner.read_resource(uri)

    def _get_needs_approval_for_tool(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner._get_needs_approval_for_tool(*args, **kwargs)

    def _get_failure_error_function(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner._get_failure_error_function(*args, **kwargs)

    async def __aenter__(self) -> StrettoMCPServer:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)
