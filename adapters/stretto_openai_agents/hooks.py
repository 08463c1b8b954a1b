"""Recording rides on the agent's own lifecycle hooks, so `instrument(agent)` is the one line.

`AgentHooks` are the per-agent form of `RunHooks`: the same events (`on_llm_start`,
`on_llm_end`, `on_tool_end`, ...), set on the agent instead of passed to every `Runner.run`.
stretto's hooks take what it needs from each event and then call the hooks the agent already had,
unchanged (their exceptions propagate as before); stretto's own part never raises.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from agents import AgentHooks

if TYPE_CHECKING:
    from stretto_openai_agents.runtime import AgentRuntime

log = logging.getLogger("stretto.openai_agents")


class StrettoAgentHooks(AgentHooks[Any]):
    """Records user messages and LLM turns (with usage); passes every event on to `inner`."""

    def __init__(self, runtime: AgentRuntime, inner: Any = None) -> None:
        self.runtime = runtime
        self.inner = inner

    def _quietly(self, what: str, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - recording never breaks the run
            log.warning("stretto: could not record %s: %s", what, exc)

    async def on_start(self, context: Any, agent: Any) -> None:
        if self.inner is not None:
            await self.inner.on_start(context, agent)

    async def on_end(self, context: Any, agent: Any, output: Any) -> None:
        self._quietly("the end of a run", self.runtime.run_ended, context)
        if self.inner is not None:
            await self.inner.on_end(context, agent, output)

    async def on_handoff(self, context: Any, agent: Any, source: Any) -> None:
        if self.inner is not None:
            await self.inner.on_handoff(context, agent, source)

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        if self.inner is not None:
            await self.inner.on_tool_start(context, agent, tool)

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        try:
            await self.runtime.tool_ended(context, tool, result)
        except Exception as exc:  # noqa: BLE001
            log.warning("stretto: could not record a tool result: %s", exc)
        if self.inner is not None:
            await self.inner.on_tool_end(context, agent, tool, result)

    async def on_llm_start(self, context: Any, agent: Any, system_prompt: Any, input_items: Any) -> None:
        self._quietly("a model call", self.runtime.model_asked, context, agent, input_items)
        if self.inner is not None:
            await self.inner.on_llm_start(context, agent, system_prompt, input_items)

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        self._quietly("a model turn", self.runtime.model_answered, context, agent, response)
        if self.inner is not None:
            await self.inner.on_llm_end(context, agent, response)
