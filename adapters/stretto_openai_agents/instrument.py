"""`agent = instrument(agent, flow=..., reads=[...])`: the one line that serves an agent.

It returns a clone of the agent (the original is left as it was) whose function tools carry
stretto's lookups, whose MCP servers are wrapped the same way, and whose hooks record the
session. One `stretto_core.Stretto` serves the clone; each run, or each conversation when
`session_key` names one, is one `LiveSession`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, TypeVar

from agents import Agent, FunctionTool
from typing_extensions import Unpack

from stretto_openai_agents.hooks import StrettoAgentHooks
from stretto_openai_agents.kinds import why_not_carrier, why_not_target
from stretto_openai_agents.mcp import StrettoMCPServer
from stretto_openai_agents.options import InstrumentOptions, StrettoOptions
from stretto_openai_agents.runtime import AgentRuntime
from stretto_openai_agents.tools import wrap_function_tool

log = logging.getLogger("stretto.openai_agents")

A = TypeVar("A", bound=Agent)


def instrument(agent: A, flow: Any = None, *, options: StrettoOptions | None = None,
               **fields: Unpack[InstrumentOptions]) -> A:
    """A copy of `agent` that stretto serves with `flow`; options as in `StrettoOptions`.

        agent = instrument(agent, flow="retail.flow.json", reads=["get_order", "get_user"])
        result = await Runner.run(agent, "Where is my order?")
    """
    if options is not None:
        if fields or flow is not None:
            raise ValueError("pass either options=StrettoOptions(...) or the option fields, not both")
    else:
        options = StrettoOptions(flow=flow, **fields)
    return instrument_with(agent, options)


def instrument_with(agent: A, options: StrettoOptions) -> A:
    if not isinstance(agent, Agent):
        raise TypeError(f"instrument() takes an agents.Agent, not {type(agent).__name__}")
    if runtime_of(agent) is not None:
        raise ValueError(f"agent {agent.name!r} is already instrumented; instrument the original once")
    runtime = AgentRuntime(options, agent)
    final = final_output_tools(agent)
    tools: list[Any] = []
    for tool in agent.tools:
        if not isinstance(tool, FunctionTool):
            tools.append(tool)
            continue
        runtime.function_tools.append(tool)
        if why_not_target(tool) is None:
            runtime.targets[tool.name] = tool
        reason = why_not_carrier(tool)
        if reason is None and (final is ALL or tool.name in final):
            reason = "its result is the agent's final output (tool_use_behavior)"
        if reason is None:
            tools.append(wrap_function_tool(tool, runtime))
        else:
            log.info("stretto: %s keeps its own invoker (%s); its results are recorded only", tool.name, reason)
            tools.append(tool)
    servers = [StrettoMCPServer(s, runtime) for s in agent.mcp_servers]
    hooks = StrettoAgentHooks(runtime, agent.hooks)
    return agent.clone(tools=tools, mcp_servers=servers, hooks=hooks)


ALL: frozenset[str] = frozenset({"*"})


def final_output_tools(agent: Agent[Any]) -> frozenset[str]:
    """Tools whose result becomes the agent's final output (`tool_use_behavior`): no appendix there."""
    behavior = agent.tool_use_behavior
    if behavior == "stop_on_first_tool":
        return ALL
    if isinstance(behavior, dict):
        return frozenset(behavior.get("stop_at_tool_names", ()))
    return frozenset()


def runtime_of(agent: Any) -> AgentRuntime | None:
    """The stretto runtime of an instrumented agent (its sessions, lookups, core `Stretto`), or None."""
    hooks = getattr(agent, "hooks", None)
    return hooks.runtime if isinstance(hooks, StrettoAgentHooks) else None


def sessions_folder(agent: Any) -> Path | None:
    """Where an instrumented agent's sessions are written (None when it records nothing)."""
    runtime = runtime_of(agent)
    return None if runtime is None else runtime.core.store
