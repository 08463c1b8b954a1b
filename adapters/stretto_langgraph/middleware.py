"""`create_agent(model, tools, middleware=[StrettoMiddleware(flow=..., reads=[...])])`.

A LangChain v1 agent middleware, configured like the built-in ones (keyword options), with sync
and async twins of each hook, so `invoke` and `ainvoke` both serve:

- `wrap_model_call`: records the user's new messages (from the state) and the model's turn, its
  text, tool calls and `usage_metadata`;
- `wrap_tool_call`: records each tool result as the agent received it, makes the flow's lookups
  with the agent's own tools and context, and appends them inside the ToolMessage;
- `before_agent` / `after_agent`: a run without a thread gets a session of its own, closed when
  the run ends; a thread's session stays open across its runs (see `conversations.py`).

Put it first in `middleware=[...]`: it then sees every tool the agent has and every model turn
as it happened, before other middleware changes them. Its lookups go down the handler it is
given, so middleware listed after it (retries, limits, emulators) also applies to them.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, PrivateStateAttr
from langchain_core.messages import AIMessage
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import Unpack

from stretto_core import Flow, LiveSession, Stretto
from stretto_core.serve.options import ServeOptions

from stretto_langgraph.conversations import MAX_OPEN, Conversation
from stretto_langgraph.serving import Serving, guarded, make_stretto, thread_of

RUN_KEY = "stretto_run"


class StrettoState(AgentState[Any]):
    """The agent state plus the key of a run's own session (private, never checkpointed)."""

    stretto_run: NotRequired[Annotated[str | None, UntrackedValue, PrivateStateAttr]]


class StrettoMiddleware(AgentMiddleware[StrettoState, Any, Any]):
    """Serve a stretto flow inside a LangChain agent, and record its sessions.

    `flow`: a `Flow` or a flow file's path (None records sessions and makes no lookup).
    `**options`: any keyword of `stretto_core.Stretto`: `reads=[...]` / `writes=[...]` /
    `manifest=` (which tools are reads; a tool's own `metadata` hints count too), `store=` (the
    sessions folder, or False), `theta`, `lookup_timeout`, `call_budget`, `per_call`,
    `per_session`, `allow`, `deny`, `shadow`, `app`, `agent_model`.
    `stretto`: an already built `Stretto` instead of `flow` and options.
    `max_open_threads`: threads whose sessions stay open at once (least recently used closed).
    """

    state_schema = StrettoState

    def __init__(self, flow: Flow | str | None = None, *, stretto: Stretto | None = None,
                 max_open_threads: int = MAX_OPEN, **options: Unpack[ServeOptions]) -> None:
        super().__init__()
        self.stretto = make_stretto(flow, stretto, options)
        self._serving = Serving(self.stretto, max_open=max_open_threads)
        self.tools = []

    # -- which conversation ---------------------------------------------------------------------
    def _key(self, state: Any, config: Any) -> tuple[str, str | None]:
        thread = thread_of(config)
        if thread is not None:
            return "thread:" + thread, thread
        run = state.get(RUN_KEY) if isinstance(state, dict) else None
        if isinstance(run, str):
            return "run:" + run, None
        messages = state.get("messages") if isinstance(state, dict) else None
        first = getattr(messages[0], "id", None) if messages else None
        return f"first:{first}", None

    def live_session(self, thread_id: str | None = None) -> LiveSession | None:
        """The open session of a thread (for tests and inspection)."""
        conversation = self._serving.conversations.get("thread:" + str(thread_id))
        return None if conversation is None else conversation.live

    def close(self) -> None:
        """Close every open session file (they reopen if their thread runs again)."""
        self._serving.close()

    # -- runs -------------------------------------------------------------------------------------
    def before_agent(self, state: StrettoState, runtime: Any) -> dict[str, Any] | None:
        if thread_of(_config()) is None:
            return {RUN_KEY: uuid.uuid4().hex}
        return None

    async def abefore_agent(self, state: StrettoState, runtime: Any) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    def after_agent(self, state: StrettoState, runtime: Any) -> dict[str, Any] | None:
        def end() -> None:
            key, thread = self._key(state, _config())
            if thread is None:
                self._serving.conversations.end(key)  # a run's session ends with the run
                return
            conversation = self._serving.conversations.get(key)
            if conversation is not None:
                conversation.live.close()  # a thread's file closes; its next run reopens it

        guarded("closing the run's session", end)
        return None

    async def aafter_agent(self, state: StrettoState, runtime: Any) -> dict[str, Any] | None:
        return self.after_agent(state, runtime)

    # -- model turns ------------------------------------------------------------------------------
    def _before_model(self, request: ModelRequest) -> Conversation | None:
        def start() -> Conversation:
            key, thread = self._key(request.state, _config())
            conversation, _ = self._serving.open(key, tools=request.tools, thread=thread,
                                                 model=request.model)
            conversation.absorb(request.messages, model_turns=False)
            return conversation

        return guarded("recording the user's messages", start)

    def _after_model(self, conversation: Conversation | None, response: Any) -> None:
        if conversation is None:
            return
        for message in _response_messages(response):
            if isinstance(message, AIMessage):
                guarded("recording a model turn", lambda m=message: conversation.model_turn(m))

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        conversation = self._before_model(request)
        response = handler(request)
        self._after_model(conversation, response)
        return response

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> Any:
        conversation = self._before_model(request)
        response = await handler(request)
        self._after_model(conversation, response)
        return response

    # -- tool calls -------------------------------------------------------------------------------
    def _conversation(self, request: ToolCallRequest) -> Conversation | None:
        def find() -> Conversation:
            key, thread = self._key(request.state, getattr(request.runtime, "config", None))
            conversation, new = self._serving.open(key, tools=getattr(request.runtime, "tools", None) or (),
                                                   thread=thread)
            if new:  # the model's turns were not seen as they happened: take them from the state
                messages = request.state.get("messages", []) if isinstance(request.state, dict) else []
                conversation.absorb(messages, model_turns=True)
            return conversation

        return guarded("finding the tool call's session", find)

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        return self._serving.serve(self._conversation(request), request, handler)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
        return await self._serving.aserve(self._conversation(request), request, handler)


def _config() -> Any:
    """The running node's config (LangGraph keeps it in a context variable), or None outside one."""
    from langgraph.config import get_config

    try:
        return get_config()
    except RuntimeError:
        return None


def _response_messages(response: Any) -> list[Any]:
    if isinstance(response, ExtendedModelResponse):
        response = response.model_response
    if isinstance(response, ModelResponse):
        return list(response.result)
    if isinstance(response, AIMessage):
        return [response]
    return []
