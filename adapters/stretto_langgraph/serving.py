"""The part the middleware and the tool node wrapper share: serve one tool call, sync or async.

After the agent's own call comes back (and the calls before it in its model turn, see
`ordering.py`), its result is recorded, the flow's lookups are made through the same handler,
and their text is appended inside the agent's ToolMessage. Whatever goes wrong on stretto's
side (a lookup, the recorder, the engine), the agent gets its own result, unchanged; a `Command`
a tool returns passes through untouched and unrecorded.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from stretto_core import Stretto

from stretto_langgraph.conversations import MAX_OPEN, Conversation, Conversations
from stretto_langgraph.kinds import manifest_of_tools
from stretto_langgraph.lookups import AsyncHandler, SyncHandler, async_call_tool, sync_call_tool
from stretto_langgraph.messages import answered_calls, model_name, tool_outcome, with_appendix

log = logging.getLogger("stretto.langgraph")

HARNESS = "langgraph"


def make_stretto(flow: Any, stretto: Stretto | None, options: Mapping[str, Any]) -> Stretto:
    """The served flow: the one given, or a new `Stretto(flow, **options)` for harness langgraph."""
    if stretto is not None:
        if flow is not None or options:
            raise TypeError("pass either stretto=Stretto(...) or flow= and its options, not both")
        return stretto
    return Stretto(flow, **{"harness": HARNESS, **options})


def thread_of(config: Mapping[str, Any] | None) -> str | None:
    """The thread a run's config names, if any."""
    if not isinstance(config, Mapping):
        return None
    configurable = config.get("configurable")
    if isinstance(configurable, Mapping):
        thread = configurable.get("thread_id")
        if thread is not None and thread != "":
            return str(thread)
    return None


class Serving:
    """One served flow and its open conversations."""

    def __init__(self, stretto: Stretto, *, max_open: int = MAX_OPEN) -> None:
        self.stretto = stretto
        self.conversations = Conversations(max_open)

    def open(self, key: str, *, tools: Sequence[Any], thread: str | None,
             model: Any = None) -> tuple[Conversation, bool]:
        """The conversation under `key`; a new one takes its tools' own kinds as this session's,
        and the name of the agent's `model` unless `agent_model=` was given."""

        def start() -> Any:
            labels = {"thread_id": thread} if thread is not None else {}
            named = self.stretto.agent_model or (None if model is None else model_name(model))
            return self.stretto.session(uuid.uuid4().hex, tools=manifest_of_tools(tools), agent_model=named,
                                        labels=labels)

        return self.conversations.get_or_open(key, start)

    # -- one tool call -------------------------------------------------------------------------
    async def aserve(self, conversation: Conversation | None, request: ToolCallRequest,
                     handler: AsyncHandler, extra_tools: Sequence[Any] = ()) -> Any:
        if conversation is None:
            return await handler(request)
        call = request.tool_call
        call_id = call.get("id") or ""
        guarded("ordering the call", lambda: conversation.order.start(call_id, answered_calls(request.state)))
        try:
            result = await handler(request)
            if not isinstance(result, ToolMessage):
                return result
            try:
                await conversation.order.await_turn(call_id)  # the calls before it in its turn first
                text, error = tool_outcome(result)
                call_tool = async_call_tool(request, handler, extra_tools)
                appendix = await conversation.live.after_tool(call_id, call["name"], _args(call), text,
                                                              call_tool, error=error)
                return with_appendix(result, appendix)
            except Exception as exc:  # noqa: BLE001 - stretto never breaks the agent's call
                log.warning("stretto: serving after %s failed and was skipped: %s", call.get("name"), exc)
                return result
        finally:
            guarded("ordering the call", lambda: conversation.order.finish(call_id))

    def serve(self, conversation: Conversation | None, request: ToolCallRequest,
              handler: SyncHandler, extra_tools: Sequence[Any] = ()) -> Any:
        if conversation is None:
            return handler(request)
        call = request.tool_call
        call_id = call.get("id") or ""
        guarded("ordering the call", lambda: conversation.order.start(call_id, answered_calls(request.state)))
        try:
            result = handler(request)
            if not isinstance(result, ToolMessage):
                return result
            try:
                conversation.order.wait(call_id)
                text, error = tool_outcome(result)
                call_tool = sync_call_tool(request, handler, extra_tools)
                appendix = conversation.live.after_tool_sync(call_id, call["name"], _args(call), text,
                                                             call_tool, error=error)
                return with_appendix(result, appendix)
            except Exception as exc:  # noqa: BLE001
                log.warning("stretto: serving after %s failed and was skipped: %s", call.get("name"), exc)
                return result
        finally:
            guarded("ordering the call", lambda: conversation.order.finish(call_id))

    def close(self) -> None:
        """Close every open conversation's session file."""
        self.conversations.close_all()


def _args(call: Mapping[str, Any]) -> dict[str, Any]:
    args = call.get("args")
    return dict(args) if isinstance(args, Mapping) else {}


def guarded(what: str, fn: Callable[[], Any]) -> Any:
    """Run a piece of stretto's own bookkeeping; a failure is logged, never raised into the agent."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001
        log.warning("stretto: %s failed and was skipped: %s", what, exc)
        return None
