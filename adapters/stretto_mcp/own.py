"""The proxy's own requests on the downstream session: the flow's lookups and the tool listing.

They go out under ids no host uses (`stretto-<nonce>-<n>`), in the host's protocol era (the
2026-07-28 envelope copied from the host's latest request), and their answers never reach the
host. The listing is read from the host's own `tools/list` answers when the host asks, and by
the proxy itself before its first lookup and after each `notifications/tools/list_changed`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable

from stretto_mcp.served import is_complete, result_as_text
from stretto_mcp.wire import id_key, request

log = logging.getLogger("stretto.proxy")


@dataclass
class _Listing:
    pages: list[dict[str, Any]] = field(default_factory=list)
    task: asyncio.Task | None = None
    asked_after: int = 0
    """Change notices that had come when the host asked for the listing's first page."""


RELIST_ROUNDS = 8
"""Listings the proxy reads in a row while the server keeps changing its tools (then it waits for
the next change notice, making no lookups meanwhile)."""


class LookupAnswer(asyncio.Future):  # type: ignore[type-arg]
    """The future of one lookup's answer: the server's pump sets the JSON-RPC answer, and it
    holds the lookup's outcome, `(text, is_error)`, as the flow's tool function returns it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop=loop)

    def set_result(self, result: Any) -> None:
        """The answer's outcome, or the lookup's failure where the answer cannot be read: the
        server's pump that sets it never sees the reader's error (untrusted text)."""
        try:
            outcome = lookup_outcome(result)
        except Exception as exc:  # noqa: BLE001 - any unreadable answer is this lookup's failure alone
            super().set_exception(ValueError(f"stretto proxy: an unreadable lookup answer ({type(exc).__name__})"))
            return
        super().set_result(outcome)


def lookup_outcome(answer: dict[str, Any]) -> tuple[str, bool]:
    """A lookup's `tools/call` answer as the text and error flag the session records."""
    if "error" in answer:
        error = answer["error"] if isinstance(answer["error"], dict) else {}
        return f"Error: {error.get('message', 'the server refused the call')}", True
    result = answer.get("result")
    if not is_complete(result):
        return "Error: the server asked for more input, which a lookup cannot give", True
    return result_as_text(result)


class OwnRequests:
    """Mixed into `Relay`: the requests the proxy makes itself (state lives on the relay)."""

    served: Any
    options: Any
    _own: dict[str, asyncio.Future]
    _envelope: dict[str, Any] | None
    _listing: "_Listing"
    _lookups_in_flight: int
    _nonce: str
    _counter: int
    _stop: asyncio.Event

    async def _to_server(self, message: dict[str, Any]) -> None: ...

    def _cancel_at_server(self, request_id: Any, reason: str) -> None: ...

    def _to_server_now(self, message: dict[str, Any]) -> bool:
        raise NotImplementedError  # the relay's

    def _own_id(self) -> str:
        self._counter += 1
        return f"stretto-{self._nonce}-{self._counter}"

    async def _ask(self, method: str, params: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """One request of the proxy's own to the server, in the host's protocol era."""
        request_id = self._own_id()
        if self._envelope:
            params = {**params, "_meta": dict(self._envelope)}
        future = asyncio.get_running_loop().create_future()
        self._own[id_key(request_id)] = future
        try:
            await self._to_server(request(request_id, method, params))
            return await asyncio.wait_for(future, timeout) if timeout else await future
        finally:
            if self._own.pop(id_key(request_id), None) is not None and not self._stop.is_set():
                self._cancel_at_server(request_id, "stretto: the proxy's own request was abandoned")

    def _lookup(self, tool: str, arguments: dict[str, Any]) -> Awaitable[tuple[str, bool]]:
        """The flow's tool function: a `tools/call` on the proxy's one downstream session.

        The listing is asked once more before the call goes out: a change notice that came
        since the decision stops it (defence in depth; the session's guard follows the listing).
        The request is written at once where the channel can take it without waiting, and what
        is returned is then the answer's own future, which the server's pump resolves to the
        lookup's text: no task, and no coroutine, stands between the answer and the engine
        (`benchmarks/proxy_cpu.py --flow`)."""
        refusal = self.served.listing.refusal(tool)
        if refusal is not None:
            raise PermissionError(f"stretto proxy: no lookup of {tool}: {refusal[1]}")
        request_id = self._own_id()
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if self._envelope:
            params["_meta"] = dict(self._envelope)
        message = request(request_id, "tools/call", params)
        answer = LookupAnswer(asyncio.get_running_loop())
        key = id_key(request_id)
        self._own[key] = answer
        self._lookups_in_flight += 1
        answer.add_done_callback(lambda done: self._lookup_ended(done, key, request_id))
        try:
            if self._to_server_now(message):
                return answer
        except BaseException:
            answer.cancel()
            raise
        return self._sent_then(message, answer)

    async def _sent_then(self, message: dict[str, Any], answer: "LookupAnswer") -> tuple[str, bool]:
        """A lookup whose request waits for the channel (a slow reader, or a channel that is
        never written at once): sent, then its answer awaited."""
        try:
            await self._to_server(message)
        except BaseException:
            answer.cancel()
            raise
        return await answer

    def _lookup_ended(self, answer: "asyncio.Future[Any]", key: str, request_id: str) -> None:
        """A lookup's answer came, failed or was given up on (its timeout, a cancel): one
        abandoned while the proxy runs is cancelled at the server too."""
        self._lookups_in_flight -= 1
        if self._own.pop(key, None) is not None and not self._stop.is_set():
            self._cancel_at_server(request_id, "stretto: the proxy's own request was abandoned")

    def _host_listing_page(self, cursor: Any, result: dict[str, Any], asked_after: int = 0) -> None:
        """One page of a listing the host asked for; `asked_after`: the change notices that had
        come when the host asked for it (a listing asked before a notice is no fresh listing)."""
        tools = result.get("tools") if isinstance(result.get("tools"), list) else []
        if cursor is None:
            self._listing.pages, self._listing.asked_after = list(tools), asked_after
        else:
            self._listing.pages = self._listing.pages + list(tools)
            self._listing.asked_after = min(self._listing.asked_after, asked_after)
        if not result.get("nextCursor"):
            self._take_listing(self._listing.pages, self._listing.asked_after)

    def _take_listing(self, tools: list[dict[str, Any]], asked_after: int | None = None) -> None:
        changes = self.served.listing.update(tools, asked_after)
        if changes or self.served.live is not None:
            self.served.listing_changed(changes)

    async def _read_listing(self) -> None:
        try:
            await self._read_listings()
        except Exception as exc:  # noqa: BLE001 - a listing not read leaves no tool a read: no lookups
            log.warning("stretto proxy: could not read the server's tool listing (%s); no lookups until it is read",
                        exc or type(exc).__name__)

    async def _read_listings(self) -> None:
        for _ in range(RELIST_ROUNDS):
            asked_after = self.served.listing.notices
            tools: list[dict[str, Any]] = []
            cursor = None
            for _ in range(100):  # a server whose cursor never ends cannot hold the proxy
                answer = await self._ask("tools/list", {"cursor": cursor} if cursor else {},
                                         timeout=self.options.listing_timeout)
                result = answer.get("result") if isinstance(answer.get("result"), dict) else {}
                tools.extend(result.get("tools") or [])
                cursor = result.get("nextCursor")
                if not cursor:
                    break
            self._take_listing(tools, asked_after)
            if not self.served.listing.stale:
                return

    def _tools_changed(self) -> None:
        """The server says its tools changed: no lookup until a listing asked for from now on is
        read (the session's guard drops every read at once), and that listing is asked for."""
        self.served.listing.changed_notice()
        if self.served.listing.known:
            self.served.listing_changed([])
        self._relist_soon()

    def _relist_soon(self) -> None:
        if self._listing.task is None or self._listing.task.done():
            self._listing.task = asyncio.create_task(self._read_listing())

    async def _listing_ready(self) -> None:
        """Before a session opens, the first listing (waited for within `listing_timeout`). A
        stale listing is not waited for: the call goes back at once, with no lookups."""
        if not self.served.listing.known:
            self._relist_soon()
        elif self.served.listing.stale:
            self._relist_soon()
            return
        task = self._listing.task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), self.options.listing_timeout)
            except Exception as exc:  # noqa: BLE001 - without a listing no tool is a read: no lookups
                log.warning("stretto proxy: could not read the server's tool listing (%s)", exc or type(exc).__name__)
