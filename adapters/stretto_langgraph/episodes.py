"""Recorded τ² episodes through a real LangChain agent: the adapter's end-to-end check.

A `create_agent` runs with a scripted chat model whose turns come from the kit's
`EpisodePlayer`, and with the episode's real τ²-bench environment behind `StructuredTool`s
(their input schema is the environment's JSON schema; their kind is in `metadata`, as MCP
annotations would put it). Each user message of the episode is one `invoke`/`ainvoke` on the
episode's thread, so the session, like the conversation, spans them all. Counting the model's
turns with and without `StrettoMiddleware` gives what `stretto replay --env` counts.

Needs the benchmark environments (`scripts/install-envs.sh`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool, ToolException

from stretto_core import Flow, Session

from stretto_langgraph.messages import content_text


class PlayerChatModel(BaseChatModel):
    """A chat model that says what an `EpisodePlayer` says, given the results it was shown."""

    player: Any
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "episode-player"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> "PlayerChatModel":
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.calls += 1
        turn = self.player.next_turn(_new_tool_outputs(messages))
        tool_calls = [{"name": c.tool, "args": dict(c.arguments), "id": c.call_id, "type": "tool_call"}
                      for c in turn.calls]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(turn.text, tool_calls=tool_calls))])


def _new_tool_outputs(messages: Sequence[BaseMessage]) -> list[str]:
    """The texts of the tool results after the model's previous turn, in the order of its calls."""
    outputs: list[str] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        outputs.append(content_text(message.content))
    return outputs[::-1]


def environment_tools(toolset: Any) -> list[StructuredTool]:
    """The toolset's tools as LangChain tools: JSON-schema input, kind in metadata, errors as errors."""
    tools = []
    for info in toolset.tools:
        def run(_name: str = info.name, **arguments: Any) -> str:
            text, error = toolset.call(_name, arguments)
            if error:
                raise ToolException(text)
            return text

        async def arun(_name: str = info.name, **arguments: Any) -> str:
            text, error = await toolset.acall(_name, arguments)
            if error:
                raise ToolException(text)
            return text

        tools.append(StructuredTool(name=info.name, description=info.description or info.name,
                                    args_schema=info.parameters, func=run, coroutine=arun,
                                    handle_tool_error=True, metadata={"readOnlyHint": info.read_only}))
    return tools


@dataclass(frozen=True)
class EpisodeRun:
    """What one episode did through the agent: model turns made and recorded, lookups made."""

    session_id: str
    llm_turns: int
    recorded_turns: int
    saved_turns: int
    model_calls: int
    lookups: int


def run_episode(session: Session, flow: Flow | None, *, mode: str = "async", store: Path | bool = False,
                **options: Any) -> EpisodeRun:
    """Play one recorded episode through `create_agent`, served by `flow` (None: no middleware)."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from stretto_core.evaluate.scripted import EpisodePlayer, Tau2Toolset
    from stretto_langgraph.middleware import StrettoMiddleware

    player = EpisodePlayer(session)
    model = PlayerChatModel(player=player)
    middleware = [] if flow is None else [StrettoMiddleware(flow, store=store, **options)]
    agent = create_agent(model, environment_tools(Tau2Toolset(session)), middleware=middleware,
                         checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": session.header.session_id}, "recursion_limit": 500}
    for segment in player.segments():
        state = {"messages": [HumanMessage(segment.user_text)]}
        if mode == "sync":
            agent.invoke(state, config)
        else:
            asyncio.run(agent.ainvoke(state, config))
    lookups = 0
    if middleware:
        live = middleware[0].live_session(session.header.session_id)
        lookups = len(live.lookups) if live is not None else 0
        middleware[0].close()
    return EpisodeRun(session.header.session_id, player.llm_turns, player.recorded_turns, player.saved_turns,
                      model.calls, lookups)
