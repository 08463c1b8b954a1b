"""`StrettoPlugin`: stretto as an ADK plugin, `App(..., plugins=[StrettoPlugin(flow=...)])`."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterable, Optional

from google.adk.plugins.base_plugin import BasePlugin
from typing_extensions import Unpack

from stretto_core import Flow, Stretto, ToolManifest
from stretto_core.serve.options import KnobsAndLabels

from stretto_adk.convert import (RESULT_KEY, content_text, error_message, fill_missing_call_ids, function_calls,
                                 turn_calls, turn_usage, with_appendix)
from stretto_adk.registry import MAX_SESSIONS, LiveSessions
from stretto_adk.tools import LookupCaller

log = logging.getLogger("stretto.adk")

HARNESS = "google-adk"

_FAILED_KEPT = 4096


def _new_call_id() -> str:
    """A call id as ADK makes one (through its own generator, so a patched one is honoured)."""
    try:
        from google.adk.flows.llm_flows import functions

        return functions.generate_client_function_call_id()
    except Exception:  # noqa: BLE001 - a moved generator only changes how the id looks
        return f"adk-{uuid.uuid4()}"


class StrettoPlugin(BasePlugin):
    """Makes the reads a learned flow predicts and appends their results inside the tool result.

    After each of the agent's tool calls, stretto decides from the flow which read-only lookups
    the agent will make before its next write, makes them with the agent's own tools, and adds
    their results to the result the model receives next: appended to a str result, under
    `result_key` in a dict result (the tool's own keys unchanged). It also records the session
    (user messages, model turns with usage, tool results as the model received them, lookups)
    in `store`, harness `google-adk`, for learning the next flow.

    Which tools are reads: a tool is looked up only if the flow marks it read *and* the plugin
    knows it is one, from MCP annotations (`readOnlyHint` on `McpToolset` tools), from
    `manifest`, or from `reads=[...]`. A tool of unknown kind is never looked up, whatever the
    flow says, and a tool declared in `writes` never is.

    Callback order: ADK stops a callback chain at the first plugin that returns a value.
    `after_tool_callback` returns None when there is nothing to add, and a new result when it
    appended lookups; that return **skips every later plugin's `after_tool_callback` and the
    agent's own `after_tool_callback`s** for that call. Put StrettoPlugin last in `plugins=[...]`
    so the others run first; a plugin before it that replaces a model response or a tool result
    hides that from stretto (the turn is then recorded as inferred from its calls). Every other
    callback returns None.

    Failures never reach the agent: a lookup that raises, hangs past `lookup_timeout`, or
    returns garbage is recorded as failed and the agent's result goes on unchanged and on time.

    Args:
      flow: a `Flow` or the path of a flow file; None only records sessions.
      reads / writes / manifest: the authority on tool kinds for tools ADK carries no hint for.
      store: the folder for recorded sessions (default `.stretto/sessions`), or False.
      result_key: the key a dict result gets for the lookups.
      max_sessions: live sessions kept open at once (see `stretto_adk.registry`).
      stretto: a ready `Stretto` (its own options), instead of the arguments above.
      name: the plugin's name, as ADK plugins take one.
      **options: the rest of `Stretto`'s options: `theta`, `lookup_timeout`, `call_budget`,
        `per_call`, `per_session`, `allow`, `deny`, `shadow`, `policy`, `app`.
    """

    def __init__(self, flow: Flow | str | Path | None = None, *, reads: Iterable[str] = (),
                 writes: Iterable[str] = (), manifest: ToolManifest | str | Path | None = None,
                 store: str | Path | bool | None = None, result_key: str = RESULT_KEY,
                 max_sessions: int = MAX_SESSIONS, stretto: Stretto | None = None, name: str = "stretto",
                 **options: Unpack[KnobsAndLabels]) -> None:
        super().__init__(name=name)
        if stretto is not None:
            if flow is not None or reads or writes or manifest is not None or store is not None or options:
                raise ValueError("pass either stretto= or the flow and its options, not both")
            self.stretto = stretto
        else:
            self.stretto = Stretto(flow, reads=reads, writes=writes, manifest=manifest, store=store,
                                   harness=HARNESS, **options)
        if not result_key:
            raise ValueError("result_key must be a non-empty string")
        self.result_key = result_key
        self.sessions = LiveSessions(self.stretto, max_sessions)
        self._failed_calls: OrderedDict[str, None] = OrderedDict()

    def end_session(self, session_id: str) -> bool:
        """The app's word that an ADK session is over: its file is closed and its state dropped."""
        return self.sessions.end(session_id) > 0

    # -- what the user says and what the model answers -----------------------------------------
    async def on_user_message_callback(self, *, invocation_context: Any, user_message: Any) -> None:
        text = content_text(user_message)
        if text is None:  # a function response the app hands back, not words
            return None
        try:
            (await self.sessions.get(invocation_context)).user(text)
        except Exception as exc:  # noqa: BLE001
            log.warning("stretto: the user message was not recorded: %s", exc)
        return None

    async def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> None:
        if getattr(llm_response, "partial", False):
            return None  # streamed chunks: the turn is the final, whole response
        try:
            calls = function_calls(llm_response)
            fill_missing_call_ids(calls, _new_call_id)  # so the turn and its results share ids
            live = await self.sessions.get(callback_context)
            live.llm_turn(text=content_text(llm_response.content) or "", calls=turn_calls(calls),
                          usage=turn_usage(getattr(llm_response, "usage_metadata", None)))
        except Exception as exc:  # noqa: BLE001
            log.warning("stretto: a model turn was not recorded: %s", exc)
        return None

    # -- tool calls --------------------------------------------------------------------------------
    async def on_tool_error_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                     error: Exception) -> None:
        call_id = tool_context.function_call_id
        if call_id:  # if a later plugin answers the error, its answer is this call's failed result
            self._failed_calls[call_id] = None
            while len(self._failed_calls) > _FAILED_KEPT:
                self._failed_calls.popitem(last=False)
        return None

    async def after_tool_callback(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any,
                                  result: Any) -> Optional[dict[str, Any]]:
        """None when there is nothing to add; else the result with the lookups (see the class doc)."""
        try:
            live = await self.sessions.get(tool_context)
            call_id = tool_context.function_call_id or _new_call_id()
            message = error_message(result)
            raised = call_id in self._failed_calls
            self._failed_calls.pop(call_id, None)
            error = True if raised or message is not None else None  # None: stretto reads isError
            serve = await self._relisted(tool_context, live)
            text = await live.after_tool(call_id, tool.name, dict(tool_args or {}),
                                         result if message is None else message,
                                         LookupCaller(tool_context), error=error, serve=serve)
        except Exception as exc:  # noqa: BLE001 - stretto never breaks the agent's call
            log.warning("stretto: after %s, nothing was looked up: %s", getattr(tool, "name", "?"), exc)
            return None
        if not text:
            return None
        return with_appendix(result, text, self.result_key)

    async def _relisted(self, tool_context: Any, live: Any) -> bool:
        """The tools listed again before a lookup round; False (no lookup) when that fails."""
        if live.engine_session is None or live.shadow:
            return True
        timeout = max(self.stretto.limits.lookup_timeout, 0.05)
        try:
            await asyncio.wait_for(self.sessions.relist(tool_context, live, timeout), timeout + 0.5)
        except Exception as exc:  # noqa: BLE001 - no fresh listing, no lookup
            log.warning("stretto: the tools could not be listed again (%s); nothing looked up after %s",
                        type(exc).__name__ if not str(exc) else exc, live.session_id)
            return False
        return True

    # -- the run's and the runner's end ----------------------------------------------------------
    async def after_run_callback(self, *, invocation_context: Any) -> None:
        self.sessions.end_run(invocation_context)

    async def on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        self.sessions.end_run(invocation_context)

    async def close(self) -> None:
        self.sessions.close_all()
