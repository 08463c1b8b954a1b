"""Wrap a `FunctionTool`'s `on_invoke_tool`: the one hook whose return the model actually sees.

`RunHooks.on_tool_end` cannot change a result (the SDK builds the output item before calling
it), so stretto wraps the invoker: it awaits the tool's own invoker unchanged (exceptions,
failure formatting and cancellation included), then hands the result to the runtime, which
records it, makes the lookups and returns it with their appendix. With the tool's
`timeout_seconds` set, the lookups stop early enough for the whole call to stay inside it.

(No `from __future__ import annotations` here: the SDK reads the invoker's first annotation on
every call, and a real `ToolContext` is cheaper for it than a string to evaluate.)
"""

import dataclasses
import time
from typing import TYPE_CHECKING, Any

from agents import FunctionTool
from agents.tool_context import ToolContext

if TYPE_CHECKING:
    from stretto_openai_agents.runtime import AgentRuntime

TIMEOUT_MARGIN = 0.25
"""Seconds (at most a tenth of the timeout) kept free before a tool's own timeout."""


def lookup_deadline(started: float, timeout: "float | None") -> "float | None":
    """When lookups riding on a call must be done, for a tool with `timeout_seconds`."""
    if timeout is None:
        return None
    return started + timeout - min(TIMEOUT_MARGIN, timeout / 10)


def wrap_function_tool(tool: FunctionTool, runtime: "AgentRuntime") -> FunctionTool:
    """A copy of `tool` whose results carry stretto's lookups; `tool` itself is left as it was."""
    original = tool.on_invoke_tool
    timeout = tool.timeout_seconds

    async def on_invoke_tool(ctx: ToolContext[Any], input: str) -> Any:
        started = time.monotonic()
        output = await original(ctx, input)
        return await runtime.after_call(ctx, input, output, lookup_deadline(started, timeout))

    on_invoke_tool.__stretto_original__ = original  # type: ignore[attr-defined]
    return dataclasses.replace(tool, on_invoke_tool=on_invoke_tool)


def is_wrapped(tool: Any) -> bool:
    """Whether a tool's invoker is stretto's."""
    return hasattr(getattr(tool, "on_invoke_tool", None), "__stretto_original__")
