"""For a hand-built LangGraph graph: `ToolNode(tools, wrap_tool_call=w, awrap_tool_call=w.awrap)`.

`StrettoToolWrapper` is the `(request, handler)` wrapper a `ToolNode` takes, as a callable for
the sync path and `.awrap` for the async one. A plain graph has no model hook, so the wrapper
takes the user's messages and the model's turns (with `usage_metadata`) from the state the
tool node receives: a turn is recorded when the graph next reaches the tool node, and a
closing reply when the same conversation reaches it again (or never, if it does not).

Conversations are the thread when the config names one, otherwise the messages a run starts
from (a run given the output of an earlier one continues its session). Call `close()` when done.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langgraph.prebuilt.tool_node import ToolCallRequest
from typing_extensions import Unpack

from stretto_core import Flow, LiveSession, Stretto
from stretto_core.serve.options import ServeOptions

from stretto_langgraph.conversations import MAX_OPEN, Conversation
from stretto_langgraph.serving import Serving, guarded, make_stretto, thread_of


class StrettoToolWrapper:
    """Serve a stretto flow inside a `ToolNode`, and record its sessions.

    Takes the same options as `StrettoMiddleware` (`flow`, `reads=[...]`, `store=`, ...), and
    `tools`: tools lookups may use besides the tool node's own (rarely needed).
    """

    def __init__(self, flow: Flow | str | None = None, *, stretto: Stretto | None = None,
                 tools: Sequence[Any] = (), max_open_threads: int = MAX_OPEN,
                 **options: Unpack[ServeOptions]) -> None:
        self.stretto = make_stretto(flow, stretto, options)
        self.extra_tools = list(tools)
        self._serving = Serving(self.stretto, max_open=max_open_threads)

    def _conversation(self, request: ToolCallRequest) -> Conversation | None:
        def find() -> Conversation:
            state = request.state if isinstance(request.state, dict) else {}
            messages = state.get("messages") or []
            thread = thread_of(getattr(request.runtime, "config", None))
            if thread is not None:
                key = "thread:" + thread
            else:
                key = f"first:{getattr(messages[0], 'id', None) if messages else None}"
            tools = [*self.extra_tools, *(getattr(request.runtime, "tools", None) or ())]
            conversation, _ = self._serving.open(key, tools=tools, thread=thread)
            conversation.absorb(messages, model_turns=True)
            return conversation

        return guarded("finding the tool call's session", find)

    def __call__(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        """The sync wrapper (`ToolNode(wrap_tool_call=...)`)."""
        return self._serving.serve(self._conversation(request), request, handler, self.extra_tools)

    async def awrap(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
        """The async wrapper (`ToolNode(awrap_tool_call=...)`)."""
        return await self._serving.aserve(self._conversation(request), request, handler, self.extra_tools)

    def tool_node(self, tools: Sequence[Any], **options: Any) -> Any:
        """A `ToolNode` of `tools` with this wrapper on both its sync and async paths."""
        from langgraph.prebuilt import ToolNode

        return ToolNode(tools, wrap_tool_call=self, awrap_tool_call=self.awrap, **options)

    def live_session(self, thread_id: str) -> LiveSession | None:
        """The open session of a thread (for tests and inspection)."""
        conversation = self._serving.conversations.get("thread:" + str(thread_id))
        return None if conversation is None else conversation.live

    def close(self) -> None:
        """Close every open session file."""
        self._serving.close()

    def __enter__(self) -> "StrettoToolWrapper":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
