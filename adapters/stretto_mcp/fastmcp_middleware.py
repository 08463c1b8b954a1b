"""stretto inside a FastMCP server: an `on_call_tool` middleware that serves a flow in-process.

    from fastmcp import FastMCP
    from stretto_mcp import StrettoFastMCPMiddleware

    mcp = FastMCP("shop", middleware=[StrettoFastMCPMiddleware("shop.flow.json")])

For users who already run a FastMCP server and would rather not put `stretto proxy` in front of
it (`pip install "stretto[fastmcp]"`). It serves as the proxy does, with the proxy's own parts:
the server's listing, pinned, decides what may be looked up (`listing.py`: `readOnlyHint` and
the flow's manifest, the allow- and denylist, schemas and the flow's contracts pinned, a tool
that vanished or turned write never looked up again), the session is recorded with inferred
turns and `refusal` events (`served.py`), and the lookups' results are appended to the
agent's result as one more text block, `structuredContent` untouched. The listing is re-read
before each call's lookups (in-process, so a tool added, removed or changed at run time is
seen before it could be looked up). Lookups run through `server.call_tool`, with the server's
whole middleware chain (authorization, rate limits and logging see them as calls) except this
middleware itself.

Sessions: one per client connection. Under stdio the server has one client, so one session;
otherwise FastMCP's `ctx.session_id`, which is stable over a 2025-11-25 (handshake-era)
connection but new for every request of a 2026-07-28 one: there, pass `session_key=` (for
example a header your clients send) or each call is a session of its own.

Options are spelled as in every adapter: `store=False` records nothing (the old `record=False`
still works, with a DeprecationWarning); `StrettoMiddleware`, the old name, is the same class.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
from collections import OrderedDict
from pathlib import Path
import warnings
from typing import Any, Callable, Iterable

from typing_extensions import Unpack

from fastmcp.exceptions import FastMCPError
from fastmcp.server.middleware import Middleware

try:
    from fastmcp.tools.base import InputRequiredToolResult
except ImportError:  # a FastMCP without multi-round-trip tools
    InputRequiredToolResult = ()  # type: ignore[assignment,misc]

from stretto_core.serve.options import Limits
from stretto_mcp.listing import Listing
from stretto_mcp.served import Served, result_as_text

log = logging.getLogger("stretto.fastmcp")

MAX_SESSIONS = 256
"""Sessions kept open at once; the least recently used is closed (its file stays whole)."""

_LOOKING_UP: contextvars.ContextVar[bool] = contextvars.ContextVar("stretto_looking_up", default=False)
"""True while this middleware makes a lookup: the lookup's own call passes straight through."""


def wire_result(result: Any) -> dict[str, Any]:
    """A FastMCP `ToolResult` as the `CallToolResult` JSON a client gets (what `Served` reads)."""
    out: dict[str, Any] = {"content": [block.model_dump(by_alias=True, mode="json", exclude_none=True)
                                       for block in getattr(result, "content", None) or []],
                           "isError": bool(getattr(result, "is_error", False))}
    if getattr(result, "structured_content", None) is not None:
        out["structuredContent"] = result.structured_content
    return out


def with_text_block(result: Any, text: str) -> Any:
    """The same `ToolResult` with one more text block; `structured_content` and `meta` as they were."""
    import mcp_types

    block = mcp_types.TextContent(type="text", text=text)
    out = result.model_copy(update={"content": [*result.content, block]})
    raw = getattr(result, "_raw_mcp_result", None)  # a proxied result keeps its wire form: extend it too
    if raw is not None:
        out._raw_mcp_result = raw.model_copy(update={"content": [*raw.content, block]})
    return out


class StrettoFastMCPMiddleware(Middleware):
    """Serve a flow inside a FastMCP server: lookups appended to the agent's tool results."""

    def __init__(self, flow: str | Path | None = None, *, store: str | Path | bool | None = None,
                 reads: Iterable[str] = (), allow: Iterable[str] | None = None, deny: Iterable[str] = (),
                 app: str | None = None, labels: dict[str, str] | None = None,
                 session_key: Callable[[Any], str | None] | None = None, record: bool | None = None,
                 **limits: Unpack[Limits]) -> None:
        """`flow`, `store` (False records nothing), `allow`/`deny` and the limits (`theta`,
        `policy`, `per_call`, `per_session`, `lookup_timeout`, `call_budget`, `shadow`) mean what
        they mean to `stretto proxy` and every adapter; `reads` names unannotated tools the
        operator vouches are read-only; `session_key(ctx)` names a FastMCP `Context`'s session
        (see the module docstring). `record=False` is the old spelling of `store=False`."""
        from stretto_core import Stretto
        from stretto_core.serve.option_values import check_names

        if record is not None:
            warnings.warn("StrettoFastMCPMiddleware(record=...) is deprecated: write store=False to record "
                          "nothing, as in every adapter", DeprecationWarning, stacklevel=2)
            if not record:
                store = False
        self.stretto = Stretto(flow, store=store, harness="fastmcp", app=app, allow=allow, deny=deny, **limits)
        checked = self.stretto.options  # allow and deny checked by the core's options
        self._listing_options = {"reads": list(check_names("reads", reads)),
                                 "allow": None if checked.allow is None else list(checked.allow),
                                 "deny": list(checked.deny)}
        self.labels = dict(labels or {})
        self.session_key = session_key or default_session_key
        self.sessions: OrderedDict[str, Served] = OrderedDict()
        self._ids = itertools.count(1)

    # -- FastMCP's hook --------------------------------------------------------------------
    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        ctx = context.fastmcp_context
        if _LOOKING_UP.get() or ctx is None:
            return await call_next(context)
        served = self._served(ctx)
        if not served.listing.known:  # the session opens knowing the tools, whatever this call does
            await self._relist(ctx.fastmcp, served)
        name, arguments = context.message.name, dict(context.message.arguments or {})
        call_id = served.call_id(next(self._ids))
        served.arrived(call_id, name, arguments)
        try:
            result = await call_next(context)
        except BaseException:
            served.unanswered(call_id)
            raise
        if getattr(result, "content", None) is None or isinstance(result, InputRequiredToolResult):
            served.turns.finished(call_id)  # not a final result: the client calls again
            return result
        try:
            await self._relist(ctx.fastmcp, served)
            appendix = await served.appendix_after(call_id, name, arguments, wire_result(result),
                                                   self._lookup_on(ctx.fastmcp))
        except Exception as exc:  # noqa: BLE001 - the agent always gets its own result
            log.warning("stretto: serving after %s failed; the result goes out unchanged: %s", name, exc)
            return result
        return with_text_block(result, appendix) if appendix else result

    def close(self) -> None:
        """Write out every open session (each file is whole at every line anyway)."""
        while self.sessions:
            _, served = self.sessions.popitem(last=False)
            served.close()

    # -- the parts -------------------------------------------------------------------------
    def _served(self, ctx: Any) -> Served:
        key = self.session_key(ctx) or "default"
        served = self.sessions.get(key)
        if served is None:
            listing = Listing(self.stretto.flow, **self._listing_options)
            served = Served(self.stretto, listing, labels={"fastmcp.server": str(ctx.fastmcp.name), **self.labels})
            if self.stretto.app is None:
                served.server_info({"name": str(ctx.fastmcp.name)})
            self.sessions[key] = served
            while len(self.sessions) > MAX_SESSIONS:
                _, oldest = self.sessions.popitem(last=False)
                oldest.close()
        self.sessions.move_to_end(key)
        return served

    async def _relist(self, server: Any, served: Served) -> None:
        """The server's tools as a client would list them, taken into the pinned listing."""
        tools = [tool.to_mcp_tool().model_dump(by_alias=True, mode="json", exclude_none=True)
                 for tool in await server.list_tools(run_middleware=False)]
        changes = served.listing.update(tools)
        if changes or served.live is not None:
            served.listing_changed(changes)

    def _lookup_on(self, server: Any) -> Callable[[str, dict[str, Any]], Any]:
        async def lookup(tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
            token = _LOOKING_UP.set(True)
            try:
                result = await server.call_tool(tool, arguments)
            except FastMCPError as exc:  # the tool said no: a failed lookup, as a client would see it
                return f"Error: {exc}", True
            finally:
                _LOOKING_UP.reset(token)
            return result_as_text(wire_result(result))

        return lookup


def default_session_key(ctx: Any) -> str | None:
    """One session per stdio server; otherwise FastMCP's session id of the connection."""
    if getattr(ctx, "transport", None) == "stdio":
        return "stdio"
    try:
        return str(ctx.session_id)
    except RuntimeError:
        return None


StrettoMiddleware = StrettoFastMCPMiddleware
"""The old name (it was also the LangGraph middleware's): the same class."""
