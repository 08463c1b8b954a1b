"""What the proxy does with the host's tool calls: record them, run the flow, append lookups.

One proxy process serves one host connection, so it keeps one `LiveSession`, opened at the
first `tools/call` once the listing is known (its header carries the listing as a manifest and,
in labels, why each of the flow's reads is not looked up; each refusal, and each one a re-listing
adds or lifts mid-session, is also a `refusal` event in the session). After each of the host's calls it
records the result as the host will see it and runs the flow with the proxy's own downstream
session as the tool function; the lookups' text is appended to the host's result as one more
text block. `structuredContent` is never touched: a tool with an `outputSchema` keeps exactly
what its server returned, and the lookups ride in text content only.
"""

from __future__ import annotations

import copy
import logging
from typing import Any, Awaitable, Callable

from stretto_core import LiveSession, Stretto, ToolCall, result_text
from stretto_core.serve.results import WHOLE
from stretto_mcp.listing import Listing
from stretto_mcp.turns import TurnInference

log = logging.getLogger("stretto.proxy")

CallTool = Callable[[str, dict[str, Any]], Awaitable[Any]]


def result_as_text(result: dict[str, Any]) -> tuple[str, bool]:
    """A `CallToolResult` (wire form) as the text a model reads, and whether it is an error."""
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    first = blocks[0] if len(blocks) == 1 else None
    if type(first) is dict and type(first.get("text")) is str:  # one text block, most results: its text
        return first["text"], bool(result.get("isError"))
    text = result_text({"content": blocks}, WHOLE) if blocks else ""
    if not blocks and "structuredContent" in result:
        text = result_text(result["structuredContent"], WHOLE)
    return text, bool(result.get("isError"))


def is_complete(result: Any) -> bool:
    """A final tool result (2026-07-28 may answer `input_required` and expect the call again)."""
    return isinstance(result, dict) and result.get("resultType", "complete") == "complete" \
        and isinstance(result.get("content", []), list)


def with_appendix(result: dict[str, Any], appendix: str) -> dict[str, Any]:
    """The host's result with one text block added; everything else exactly as the server sent it."""
    out = copy.copy(result)
    out["content"] = list(result.get("content") or []) + [{"type": "text", "text": appendix}]
    return out


class Served:
    """The recorded, served session of one host connection."""

    def __init__(self, stretto: Stretto, listing: Listing, *, session_id: str | None = None,
                 task_id: str | None = None, labels: dict[str, str] | None = None, solo: bool = False) -> None:
        self.stretto = stretto
        self.listing = listing
        self.turns = TurnInference()
        self.session_id = session_id
        self.task_id = task_id
        self.solo = solo
        self.labels = dict(labels or {})
        self.live: LiveSession | None = None
        self._ids: dict[str, int] = {}
        self._refused: dict[str, tuple[str, str]] = {}  # tool -> (code, why) as last recorded

    def call_id(self, request_id: Any) -> str:
        """A session-unique call id from a JSON-RPC id (a host may reuse ids once answered)."""
        base = str(request_id)
        seen = self._ids.get(base, 0)
        self._ids[base] = seen + 1
        return base if seen == 0 else f"{base}#{seen}"

    def server_info(self, info: Any) -> None:
        """The server's name names the app of the session, unless the operator named one (`--app`)."""
        if not isinstance(info, dict) or self.live is not None:
            return
        if self.stretto.app is None and isinstance(info.get("name"), str):
            self.stretto.app = info["name"]
        if isinstance(info.get("version"), str):
            self.labels.setdefault("proxy.server_version", info["version"])

    def arrived(self, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        self.turns.arrived(ToolCall(call_id=call_id, tool=tool, arguments=dict(arguments)))

    def _session(self) -> LiveSession:
        if self.live is None:
            labels = {**self.labels, **self.listing.labels()}
            for tool, why in self.listing.refusals().items():
                log.info("stretto proxy: no lookup of %s: %s", tool, why)
            self.live = self.stretto.session(self.session_id, tools=self.listing.manifest(),
                                             task_id=self.task_id, labels=labels, solo=self.solo)
            self._record_refusals()
        return self.live

    def _record_refusals(self) -> None:
        """Each refusal of a flow's read that is new or changed becomes a `refusal` event; one
        that no longer holds, a `refusal` event with `lifted: true`. Before the proxy has read a
        listing there is nothing to say (no tool is a read yet)."""
        if self.live is None or not self.listing.known:
            return
        now = self.listing.coded_refusals()
        for tool, (code, why) in now.items():
            if self._refused.get(tool) != (code, why):
                self.live.refused(tool, code, why)
        for tool in sorted(set(self._refused) - set(now)):
            code, why = self._refused[tool]
            self.live.refused(tool, code, f"no longer holds ({why}): lookups may be made again",
                              lifted=True)
        self._refused = dict(now)

    def listing_changed(self, changes: list[str]) -> None:
        """The server re-listed its tools: the guard follows from the next decision on."""
        for change in changes:
            log.warning("stretto proxy: the server's tools changed: %s", change)
        if self.live is not None:
            self.live.update_tools(self.listing.manifest())
            for tool, why in self.listing.refusals().items() if changes else ():
                log.warning("stretto proxy: no lookups of %s from now on: %s", tool, why)
            self._record_refusals()

    async def after_call(self, call_id: str, tool: str, arguments: dict[str, Any],
                         result: dict[str, Any], call_tool: CallTool, *,
                         trace: dict[str, Any] | None = None) -> dict[str, Any]:
        """Record the host's result, make the flow's lookups, and return the result to send.
        `trace`: the request's `_meta`, whose W3C `traceparent` names the host's span of the call."""
        appendix = await self.appendix_after(call_id, tool, arguments, result, call_tool, trace=trace)
        return with_appendix(result, appendix) if appendix else result

    async def appendix_after(self, call_id: str, tool: str, arguments: dict[str, Any],
                             result: dict[str, Any], call_tool: CallTool, *,
                             trace: dict[str, Any] | None = None) -> str:
        """Record the host's result and make the flow's lookups; the text to append ("" for none)."""
        live = self._session()
        self._announce(live, call_id)
        text, error = result_as_text(result)
        appendix = await live.after_tool(call_id, tool, arguments, text, call_tool, error=error, trace=trace)
        self.turns.finished(call_id)
        return appendix

    def unanswered(self, call_id: str) -> None:
        """A call that got no result (cancelled, failed, the server gone): its turn is still recorded."""
        calls = self.turns.take_turn(call_id)
        if calls:
            self._session().llm_turn(calls=calls, inferred=True)
        self.turns.finished(call_id)

    def _announce(self, live: LiveSession, call_id: str) -> None:
        calls = self.turns.take_turn(call_id)
        if calls:
            live.llm_turn(calls=calls, inferred=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.close()
