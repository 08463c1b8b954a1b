"""The relay: every message between the host and the server, forwarded as it came, both ways.

Requests, responses and notifications of every method pass through unchanged (tools, resources,
prompts, completions, subscriptions, list-changed, progress, logging, cancellation, and the
server's own requests to the host: sampling, elicitation, roots, ping), with their own ids: the
host's ids go to the server and the server's to the host, so nothing needs renaming. The proxy
adds requests of its own on the same downstream session (the flow's lookups, re-reading the
tool listing), under ids no host uses; their answers, and the log lines they cause, never
reach the host. Only one kind of message is changed: the server's answer to a host's
`tools/call`, to which the lookups' text is appended (`served.py`).

Failures end in a clear state, never a hang: see `ExitStatus`.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from typing import Any

from stretto_mcp.channels import Channel, ChannelClosed
from stretto_mcp.own import OwnRequests, _Listing
from stretto_mcp.served import Served, is_complete
from stretto_mcp.state import ExitStatus, RelayOptions, ServerGone, _Pending
from stretto_core.serve.pauses import after_reply, when_idle
from stretto_mcp.wire import (INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, SERVER_GONE, Malformed, envelope_of,
                              error_response, id_key, is_notification, is_request, is_response, meta_of,
                              notification, params_of)

log = logging.getLogger("stretto.proxy")

IDLE_COLLECT_AFTER = 2.0
"""Seconds with no request in flight after which a full collection runs (`serve/pauses.py`)."""


class Relay(OwnRequests):
    """One host connection in front of one server session."""

    def __init__(self, host: Channel, server: Channel, served: Served, options: RelayOptions | None = None) -> None:
        self.host = host
        self.server = server
        self.served = served
        self.options = options or RelayOptions()
        self.status = ExitStatus.CLEAN
        self.malformed = 0
        self._pending: dict[str, _Pending] = {}
        self._own: dict[str, asyncio.Future] = {}
        self._progress: dict[str, str] = {}  # progress token -> pending key
        self._nonce = secrets.token_hex(3)
        self._counter = 0
        self._envelope: dict[str, Any] | None = None
        self._lookups_in_flight = 0
        self._listing = _Listing()
        self._stop = asyncio.Event()
        self._ending: str | None = None
        self._host_open = True
        self._idle_collected = True  # a full collection is due only once a reply went out since the last
        self._replied = time.monotonic()

    # -- running ---------------------------------------------------------------------------
    async def run(self) -> ExitStatus:
        pumps = [asyncio.create_task(self._guarded(pump)) for pump in (self._from_host, self._from_server, self._watch)]
        try:
            await self._stop.wait()
        finally:
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            await self._shutdown()
        return self.status

    async def _guarded(self, pump: Any) -> None:
        """A pump that fails (a bug) stops the proxy with status 1 rather than leaving a side waiting."""
        try:
            await pump()
        except (asyncio.CancelledError, ServerGone):
            raise
        except Exception:  # noqa: BLE001
            log.exception("stretto proxy: internal error in %s", pump.__name__)
            self.stop(ExitStatus.INTERNAL, f"internal error in {pump.__name__}; stopping")

    def stop(self, status: ExitStatus, why: str) -> None:
        """End the run once; the first reason given is the one reported."""
        if self._ending is None:
            self._ending = why
            if status is not ExitStatus.CLEAN:
                self.status = status
            log.log(logging.INFO if status is ExitStatus.CLEAN else logging.ERROR, "stretto proxy: %s", why)
        self._stop.set()

    async def _shutdown(self) -> None:
        gone = ServerGone(self._ending or "the proxy is stopping")
        for future in self._own.values():
            if not future.done():
                future.set_exception(gone)
        tasks = []
        for key, pending in list(self._pending.items()):
            if pending.future is not None:
                if not pending.future.done():
                    pending.future.set_exception(gone)
                if pending.task is not None:
                    tasks.append(pending.task)
            else:
                self._pending.pop(key, None)
                await self._to_host(error_response(pending.message["id"], SERVER_GONE, f"stretto proxy: {gone}"))
        if tasks:
            await asyncio.wait(tasks, timeout=5.0)
        self.served.close()
        await self.server.aclose()
        await self.host.aclose()
        if self.malformed and self.status is ExitStatus.CLEAN:
            self.status = ExitStatus.MALFORMED
        if self.malformed:
            log.warning("stretto proxy: %d message(s) were not JSON-RPC and were not forwarded", self.malformed)

    # -- the host's side ---------------------------------------------------------------------
    async def _from_host(self) -> None:
        try:
            await self._host_messages()
        except ServerGone:
            return  # stop() was called; the shutdown answers what is in flight

    async def _host_messages(self) -> None:
        while True:
            message = await self.host.receive()
            if message is None:
                if getattr(self.host, "answers_after_input", False):
                    await self._answer_in_flight()
                self._host_open = False
                self._host_left()
                return
            if isinstance(message, Malformed):
                await self._host_malformed(message)
            elif is_request(message):
                self._envelope = envelope_of(message) or self._envelope
                if message["method"] == "tools/call":
                    await self._host_call(message)
                else:
                    self._track(message, _Pending(message["method"], message, time.monotonic(),
                                                  notices=self.served.listing.notices))
                    await self._to_server(message)
            elif is_notification(message):
                if message["method"] == "notifications/cancelled":
                    self._host_cancelled(params_of(message).get("requestId"))
                await self._to_server(message)
            else:
                await self._to_server(message)  # the host's answer to a server request

    def _track(self, message: dict[str, Any], pending: _Pending) -> None:
        self._pending[id_key(message["id"])] = pending
        token = meta_of(message).get("progressToken")
        if token is not None:
            self._progress[id_key(token)] = id_key(message["id"])

    async def _host_malformed(self, bad: Malformed) -> None:
        self.malformed += 1
        log.error("stretto proxy: the host sent a message that is not JSON-RPC (%s): %s", bad.reason, bad.excerpt())
        if bad.message_id is not None or bad.reason.startswith(("not JSON", "a JSON ")) or bad.too_long == "request":
            # a batch or any other non-object has no id to answer: the error's id is null (JSON-RPC 2.0 §5)
            code = PARSE_ERROR if bad.reason.startswith("not JSON") else INVALID_REQUEST
            await self._to_host(error_response(bad.message_id, code, f"stretto proxy: {bad.reason}"))

    async def _answer_in_flight(self) -> None:
        """Wait until every request the host's input held is answered (or timed out by the
        server's watch, or cancelled), so a file of requests loses none of its answers."""
        while any(not p.cancelled for p in self._pending.values()) and not self._stop.is_set():
            await asyncio.sleep(0.02)

    def _host_left(self) -> None:
        if self._ending is not None:
            return
        in_flight = [p for p in self._pending.values() if not p.cancelled]
        if not in_flight:
            self.stop(ExitStatus.CLEAN, "the host closed the connection")
            return
        for pending in in_flight:
            self._cancel_at_server(pending.message["id"], "the host disconnected")
            if pending.call_id is not None and pending.at_server:
                self.served.unanswered(pending.call_id)
        names = ", ".join(sorted({p.method for p in in_flight}))
        self.stop(ExitStatus.HOST_LEFT, f"the host disconnected with {len(in_flight)} request(s) in flight "
                                        f"({names}); cancelled them at the server")

    def _host_cancelled(self, request_id: Any) -> None:
        pending = self._pending.get(id_key(request_id)) if request_id is not None else None
        if pending is None:
            return
        pending.cancelled = True
        if pending.future is None:
            self._pending.pop(id_key(request_id), None)
        elif pending.at_server and pending.task is not None:
            pending.task.cancel()  # lookups already under way finish and are recorded; nothing is sent

    async def _host_call(self, message: dict[str, Any]) -> None:
        params = params_of(message)
        name = params.get("name")
        arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        if not isinstance(name, str):
            self._track(message, _Pending("tools/call", message, time.monotonic()))
            await self._to_server(message)  # the server says what is wrong with it
            return
        call_id = self.served.call_id(message["id"])
        self.served.arrived(call_id, name, arguments)
        pending = _Pending("tools/call", message, time.monotonic(), future=asyncio.get_running_loop().create_future(),
                           call_id=call_id)
        self._track(message, pending)
        pending.task = asyncio.create_task(self._answer_call(pending, name, arguments))
        await self._to_server(message)

    async def _answer_call(self, pending: _Pending, name: str, arguments: dict[str, Any]) -> None:
        """`_finish_call`, and if it fails (a bug), the host still gets an answer, never a wait."""
        try:
            await self._finish_call(pending, name, arguments)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001
            log.exception("stretto proxy: internal error answering %s", name)
            self._pending.pop(id_key(pending.message["id"]), None)
            if not pending.cancelled:
                await self._to_host(error_response(pending.message["id"], INTERNAL_ERROR,
                                                   f"stretto proxy: internal error ({type(exc).__name__})"))

    async def _finish_call(self, pending: _Pending, name: str, arguments: dict[str, Any]) -> None:
        key = id_key(pending.message["id"])
        assert pending.future is not None and pending.call_id is not None
        try:
            response = await pending.future
        except asyncio.CancelledError:
            self.served.unanswered(pending.call_id)
            self._pending.pop(key, None)
            return
        except ServerGone as exc:
            self.served.unanswered(pending.call_id)
            self._pending.pop(key, None)
            await self._to_host(error_response(pending.message["id"], SERVER_GONE, f"stretto proxy: {exc}"))
            return
        pending.at_server = False
        await self._listing_ready()  # the session opens with the listing known, whatever came back
        result = response.get("result")
        if "error" in response:
            self.served.unanswered(pending.call_id)  # a protocol error is no tool result
            out = response
        elif not is_complete(result):
            self.served.turns.finished(pending.call_id)  # input_required: the host calls again
            out = response
        else:
            try:  # nothing cancels this task from here on (the host's cancel stops at the server's answer)
                meta = params_of(pending.message).get("_meta")  # a host's traceparent parents the lookups' spans
                served = await self.served.after_call(pending.call_id, name, arguments, result, self._lookup,
                                                      trace=meta if isinstance(meta, dict) else None)
                # nothing appended: the server's answer goes out as the very bytes it came as
                out = response if served is result else {**response, "result": served}
            except asyncio.CancelledError:
                out = None
            except Exception as exc:  # noqa: BLE001 - the host always gets its own result
                log.exception("stretto proxy: serving after %s failed; the result goes out unchanged: %s", name, exc)
                out = response
        self._pending.pop(key, None)
        if out is not None and not pending.cancelled:
            await self._to_host(out)

    # -- the server's side -------------------------------------------------------------------
    async def _from_server(self) -> None:
        while True:
            message = await self.server.receive()
            if message is None:
                wait_exit = getattr(self.server, "wait_exit", None)
                if wait_exit is not None:
                    await wait_exit(1.0)  # a child that closed its output is usually exiting: say how
                note = getattr(self.server, "exit_note", lambda: "it closed the connection")()
                waiting = [p for p in self._pending.values() if p.at_server]
                mid = f" with {len(waiting)} request(s) in flight" if waiting else ""
                self.stop(ExitStatus.SERVER_GONE, f"the server went away{mid}: {note}")
                return
            if isinstance(message, Malformed):
                await self._server_malformed(message)
            elif is_response(message):
                await self._server_response(message)
            elif is_notification(message):
                await self._server_notification(message)
            else:
                await self._to_host(message)  # sampling, elicitation, roots, ping: the host answers

    async def _server_response(self, message: dict[str, Any]) -> None:
        key = id_key(message.get("id"))
        own = self._own.pop(key, None)
        if own is not None:
            if not own.done():
                own.set_result(message)
            return
        pending = self._pending.get(key)
        if pending is None:
            log.debug("stretto proxy: dropped an answer to no request in flight (id %r)", message.get("id"))
            return
        if pending.future is not None:
            if not pending.future.done():
                pending.future.set_result(message)
            return
        self._pending.pop(key, None)
        result = message.get("result")
        if isinstance(result, dict) and self.served.live is None:  # who the server is (both eras)
            meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
            self.served.server_info(result.get("serverInfo") or meta.get("io.modelcontextprotocol/serverInfo"))
        if pending.method == "tools/list" and isinstance(message.get("result"), dict):
            self._host_listing_page(params_of(pending.message).get("cursor"), message["result"], pending.notices)
        if not pending.cancelled:
            await self._to_host(message)

    async def _server_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = params_of(message)
        if method == "notifications/message" and self._lookups_in_flight and not self._host_waiting():
            log.debug("stretto proxy: kept a server log line from the host (it came during a lookup)")
            return
        if method == "notifications/progress":
            target = self._pending.get(self._progress.get(id_key(params.get("progressToken")), ""))
            if target is not None:
                target.started = time.monotonic()  # a server that reports progress is not hung
        if method == "notifications/tools/list_changed":
            self._tools_changed()
        await self._to_host(message)

    async def _server_malformed(self, bad: Malformed) -> None:
        self.malformed += 1
        log.error("stretto proxy: the server sent a message that is not JSON-RPC (%s): %s", bad.reason, bad.excerpt())
        key = id_key(bad.message_id) if bad.message_id is not None else None
        if key is None and bad.too_long == "answer":  # its ends show no id: the one request it can answer
            waiting = [k for k, p in self._pending.items() if p.at_server and not p.cancelled]
            key = waiting[0] if len(waiting) == 1 and not self._own else None
            if key is not None:
                bad.message_id = self._pending[key].message["id"]
        if key is not None and key in self._own:
            self._own.pop(key).set_result(error_response(bad.message_id, INTERNAL_ERROR, bad.reason))
        elif key is not None and key in self._pending:
            pending = self._pending[key]
            answer = error_response(bad.message_id, INTERNAL_ERROR,
                                    f"stretto proxy: the server's answer was malformed ({bad.reason})")
            if pending.future is not None:
                if not pending.future.done():
                    pending.future.set_result(answer)
            else:
                self._pending.pop(key, None)
                await self._to_host(answer)

    def _host_waiting(self) -> bool:
        return any(p.at_server and (p.future is None or not p.future.done()) for p in self._pending.values())

    async def _watch(self) -> None:
        """Take a server that leaves a host request unanswered past the timeout as hung."""
        period = max(0.05, min(1.0, self.options.server_timeout / 4))
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            if not self._pending and not self._idle_collected and now - self._replied >= IDLE_COLLECT_AFTER:
                when_idle()  # nothing in flight: a full collection here pauses no call
                self._idle_collected = True
            for pending in list(self._pending.values()):
                waited = now - pending.started
                if pending.at_server and not pending.cancelled and waited > self.options.server_timeout:
                    self.stop(ExitStatus.SERVER_HUNG,
                              f"the server has not answered {pending.method} (id {pending.message['id']!r}) "
                              f"for {waited:.1f} s; taking it as hung and stopping it")
                    return

    # -- sending -------------------------------------------------------------------------
    async def _to_server(self, message: dict[str, Any]) -> None:
        try:
            await self.server.send(message)
        except ChannelClosed:
            note = getattr(self.server, "exit_note", lambda: "it closed the connection")()
            self.stop(ExitStatus.SERVER_GONE, f"the server went away: {note}")
            raise ServerGone(note) from None

    def _to_server_now(self, message: dict[str, Any]) -> bool:
        """`_to_server` without waiting, where the channel can write at once (`send_nowait`);
        False when nothing was written (the caller awaits `_to_server` instead)."""
        send_now = getattr(self.server, "send_nowait", None)
        if send_now is None:
            return False
        try:
            return bool(send_now(message))
        except ChannelClosed:
            note = getattr(self.server, "exit_note", lambda: "it closed the connection")()
            self.stop(ExitStatus.SERVER_GONE, f"the server went away: {note}")
            raise ServerGone(note) from None

    async def _to_host(self, message: dict[str, Any]) -> None:
        if not self._host_open:
            return
        try:
            await self.host.send(message)
        except ChannelClosed:
            self._host_open = False
            self._host_left()
            return
        after_reply()  # the collection that is due, now that the reply is out (`serve/pauses.py`)
        self._idle_collected, self._replied = False, time.monotonic()

    def _cancel_at_server(self, request_id: Any, reason: str) -> None:
        message = notification("notifications/cancelled", {"requestId": request_id, "reason": reason})
        asyncio.ensure_future(self._quietly(message))

    async def _quietly(self, message: dict[str, Any]) -> None:
        try:
            await self.server.send(message)
        except Exception:  # noqa: BLE001 - best effort: the server may be gone
            pass
