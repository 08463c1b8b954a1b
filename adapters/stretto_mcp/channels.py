"""The proxy's two ends as message channels: the host on stdio, the server as a child or a URL.

A channel moves whole JSON-RPC messages (dicts). `receive()` returns the next message, a
`Malformed` line (the proxy reports it and goes on), or None once the other side is gone.
MCP's stdio transport is one JSON object per line; the proxy frames it itself so it can forward
a message byte for byte in meaning (no model round trip drops an unknown field) and learn a
child's exit status. A Streamable HTTP server goes through the mcp SDK's own client transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import Any, Protocol

from stretto_mcp.oversize import END_BYTES, id_from_ends, is_request_head
from stretto_mcp.wire import Malformed, encode, parse_line

LINE_LIMIT = 256 * 1024 * 1024
"""The longest line (one message) the proxy reads: 256 MiB (docs/proxy.md). A longer one is not
forwarded: a request is answered at once with a JSON-RPC error, an answer fails the host's
request it answers (`Malformed.too_long`), and both are logged; the next message is read whole."""

DRAIN_ABOVE = 64 * 1024
"""Bytes waiting in a channel's write buffer past which a send waits for the other side to read."""

GRACE_SECONDS = 2.0
"""After closing a child's stdin, how long it may take to exit before SIGTERM, then SIGKILL."""


def too_long(head: bytes, tail: bytes) -> Malformed:
    """A line over `LINE_LIMIT`, as a `Malformed` that names its id where its ends show one."""
    bad = Malformed(head[:200].decode("utf-8", errors="replace"),
                    f"a message longer than the proxy's limit of {LINE_LIMIT // (1024 * 1024)} MiB",
                    id_from_ends(head, tail))
    bad.too_long = "request" if is_request_head(head) else "answer"
    return bad


class ChannelClosed(Exception):
    """The other side of a channel is gone: a write can no longer reach it."""


class Channel(Protocol):
    name: str

    async def receive(self) -> dict[str, Any] | Malformed | None: ...

    async def send(self, message: dict[str, Any]) -> None: ...

    async def aclose(self) -> None: ...


class _LineChannel:
    """A channel over a stream reader and writer of JSON lines."""

    def __init__(self, name: str, reader: asyncio.StreamReader, writer: Any) -> None:
        self.name = name
        self._reader = reader
        self._writer = writer
        self._closed = False
        self._lock = asyncio.Lock()

    async def receive(self) -> dict[str, Any] | Malformed | None:
        while True:
            try:
                raw = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                raw = exc.partial
                if not raw.strip():
                    return None
            except asyncio.LimitOverrunError as exc:
                return await self._skip_long_line(exc.consumed)
            except (ConnectionError, OSError, ValueError):
                return None
            text = raw.decode("utf-8", errors="replace")
            if text.strip():
                return parse_line(text, raw)

    async def _skip_long_line(self, consumed: int) -> Malformed:
        """Read past a line over the limit, keeping its two ends (for its id), never the whole;
        what follows its newline stays in the reader, whole."""
        head = b""
        tail = b""
        with contextlib.suppress(Exception):
            while True:
                piece = await self._reader.readexactly(consumed) if consumed else b""
                head = head or piece[:END_BYTES]
                tail = (tail + piece)[-END_BYTES:]
                try:
                    end = await self._reader.readuntil(b"\n")
                except asyncio.LimitOverrunError as exc:
                    consumed = exc.consumed
                    continue
                except asyncio.IncompleteReadError as exc:
                    end = exc.partial
                head = head or end[:END_BYTES]
                tail = (tail + end)[-END_BYTES:]
                break
        return too_long(head, tail)

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ChannelClosed(self.name)
        data = encode(message)
        transport = self._writer.transport
        if transport.is_closing():
            self._closed = True
            raise ChannelClosed(self.name)
        try:
            self._writer.write(data)  # whole: a write goes out or waits in the buffer, never split
            if transport.get_write_buffer_size() > DRAIN_ABOVE:
                async with self._lock:  # the other side reads slowly: wait here, not in memory
                    await self._writer.drain()
        except (ConnectionError, OSError, RuntimeError) as exc:
            self._closed = True
            raise ChannelClosed(self.name) from exc

    def send_nowait(self, message: dict[str, Any]) -> bool:
        """`send` where it need not wait: False, with nothing written, while the other side
        reads slowly (more than `DRAIN_ABOVE` bytes wait), so the caller awaits `send`."""
        if self._closed:
            raise ChannelClosed(self.name)
        transport = self._writer.transport
        if transport.is_closing():
            self._closed = True
            raise ChannelClosed(self.name)
        if transport.get_write_buffer_size() > DRAIN_ABOVE:
            return False
        try:
            self._writer.write(encode(message))
        except (ConnectionError, OSError, RuntimeError) as exc:
            self._closed = True
            raise ChannelClosed(self.name) from exc
        return True

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            self._writer.close()


async def open_host_stdio() -> _LineChannel:
    """The host's end: this process's stdin and stdout, claimed for the wire.

    fd 1 is re-pointed at stderr (and fd 0 at the null device) once the wire has private
    duplicates, so nothing printed by accident (a library, a child) can corrupt a frame.
    """
    loop = asyncio.get_running_loop()
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    in_file = os.fdopen(wire_in, "rb", buffering=0)
    out_file = os.fdopen(wire_out, "wb", buffering=0)
    if not (_streams(wire_in) and _streams(wire_out)):
        # A file, /dev/null or a terminal: the event loop cannot poll it (epoll refuses /dev/null
        # and regular files), so blocking I/O in threads, both ways, decided before either is used.
        return _ThreadedHost(in_file, out_file)  # type: ignore[return-value]
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), in_file)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out_file)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return _LineChannel("host", reader, writer)


def _streams(fd: int) -> bool:
    """Whether the event loop can wait on `fd`: a pipe or a socket (what a host starts us with)."""
    import stat

    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _ThreadedHost:
    """The host's end where stdio is not a pipe (a file, a terminal): blocking I/O in threads."""

    name = "host"
    answers_after_input = True
    """The end of its input is not a host leaving (a file of requests ends; a terminal's user
    types Ctrl-D): what it asked is answered before the proxy exits."""

    def __init__(self, in_file: Any, out_file: Any) -> None:
        self._in = in_file
        self._out = out_file
        self._closed = False

    async def receive(self) -> dict[str, Any] | Malformed | None:
        while True:
            raw = await asyncio.to_thread(self._in.readline, LINE_LIMIT)
            if not raw:
                return None
            if len(raw) >= LINE_LIMIT and not raw.endswith(b"\n"):
                return await asyncio.to_thread(self._skip_long_line, raw)
            text = raw.decode("utf-8", errors="replace")
            if text.strip():
                return parse_line(text, raw)

    def _skip_long_line(self, head: bytes) -> Malformed:
        tail = head[-END_BYTES:]
        while True:
            piece = self._in.readline(1 << 20)
            tail = (tail + piece)[-END_BYTES:]
            if not piece or piece.endswith(b"\n"):
                return too_long(head[:END_BYTES], tail)

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ChannelClosed(self.name)
        try:
            await asyncio.to_thread(self._out.write, encode(message))
        except OSError as exc:
            self._closed = True
            raise ChannelClosed(self.name) from exc

    async def aclose(self) -> None:
        self._closed = True


class ChildServer(_LineChannel):
    """A downstream stdio MCP server: a child process in its own process group."""

    def __init__(self, process: asyncio.subprocess.Process, command: list[str]) -> None:
        assert process.stdout is not None and process.stdin is not None
        super().__init__("server", process.stdout, process.stdin)
        self.process = process
        self.command = command

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def exit_note(self) -> str:
        code = self.process.returncode
        if code is None:
            return "it closed its output but is still running"
        if code < 0:
            try:
                return f"it was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"it was killed by signal {-code}"
        return f"it exited with status {code}"

    async def wait_exit(self, timeout: float) -> bool:
        try:
            await asyncio.wait_for(self.process.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    async def aclose(self) -> None:
        """Close its stdin, give it the grace period, then SIGTERM and SIGKILL its group."""
        await super().aclose()
        if self.process.returncode is not None:
            return
        if await self.wait_exit(GRACE_SECONDS):
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, sig)
            if await self.wait_exit(GRACE_SECONDS):
                return


async def spawn_server(command: list[str], env: dict[str, str] | None = None,
                       cwd: str | None = None) -> ChildServer:
    """Start the downstream server; its stderr is the proxy's (the host shows it in its log)."""
    if not command:
        raise ValueError("no server command")
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=sys.stderr,
        env=env, cwd=cwd, start_new_session=True, limit=LINE_LIMIT)
    return ChildServer(process, command)


class HttpServer:
    """A Streamable HTTP MCP server, through the mcp SDK's client transport.

    Each request carries the headers a 2026-07-28 server checks (`MCP-Protocol-Version`,
    `Mcp-Method`, `Mcp-Name`) when it carries that era's envelope; handshake-era traffic
    needs none beyond the session id, which the transport keeps.
    """

    name = "server"

    def __init__(self, url: str) -> None:
        self.url = url
        self._stack = contextlib.AsyncExitStack()
        self._read: Any = None
        self._write: Any = None
        self._closed = False

    async def start(self) -> "HttpServer":
        from mcp.client.streamable_http import streamable_http_client

        self._read, self._write = await self._stack.enter_async_context(streamable_http_client(self.url))
        return self

    def exit_note(self) -> str:
        return f"the connection to {self.url} ended"

    async def receive(self) -> dict[str, Any] | Malformed | None:
        try:
            item = await self._read.receive()
        except Exception:  # noqa: BLE001 - end of stream, closed, broken: the server is gone
            return None
        if isinstance(item, Exception):
            return Malformed(str(item)[:200], f"the server sent what is not a JSON-RPC message ({item})")
        return item.message.model_dump(by_alias=True, exclude_unset=True, mode="json")

    async def send(self, message: dict[str, Any]) -> None:
        import mcp_types
        from mcp.shared.message import ClientMessageMetadata, SessionMessage

        if self._closed:
            raise ChannelClosed(self.name)
        parsed = mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
        headers = _modern_headers(message)
        metadata = ClientMessageMetadata(headers=headers) if headers else None
        try:
            await self._write.send(SessionMessage(parsed, metadata=metadata))
        except Exception as exc:  # noqa: BLE001
            self._closed = True
            raise ChannelClosed(self.name) from exc

    async def aclose(self) -> None:
        if self._closed and self._stack is None:
            return
        self._closed = True
        stack, self._stack = self._stack, None
        if stack is not None:
            import anyio

            with contextlib.suppress(Exception), anyio.move_on_after(GRACE_SECONDS * 2):
                await stack.aclose()  # in this task: the transport's cancel scopes were entered here


def _modern_headers(message: dict[str, Any]) -> dict[str, str] | None:
    from mcp.shared.inbound import NAME_BEARING_METHODS, encode_header_value

    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    version = meta.get("io.modelcontextprotocol/protocolVersion")
    method = message.get("method")
    if not isinstance(version, str) or not isinstance(method, str):
        return None
    headers = {"mcp-protocol-version": version, "mcp-method": method}
    name_key = NAME_BEARING_METHODS.get(method)
    if name_key and isinstance(params.get(name_key), str):
        headers["mcp-name"] = encode_header_value(params[name_key])
    return headers


class Traced:
    """A channel that also writes every message it moves to a trace file (`--trace FILE`)."""

    def __init__(self, inner: Any, trace: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self._trace = trace

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _note(self, direction: str, message: Any) -> None:
        import json
        import time

        body = message if isinstance(message, dict) else {"malformed": getattr(message, "reason", None)}
        self._trace.write(json.dumps({"t": round(time.monotonic(), 6), "dir": direction, "msg": body},
                                     default=str) + "\n")
        self._trace.flush()

    async def receive(self) -> Any:
        message = await self.inner.receive()
        self._note(f"{self.name}>proxy", message if message is not None else {"eof": True})
        return message

    async def send(self, message: dict[str, Any]) -> None:
        self._note(f"proxy>{self.name}", message)
        await self.inner.send(message)

    def send_nowait(self, message: dict[str, Any]) -> bool:
        """The inner channel's `send_nowait`, noted once written (False where it has none)."""
        send_now = getattr(self.inner, "send_nowait", None)
        if send_now is None or not send_now(message):
            return False
        self._note(f"proxy>{self.name}", message)
        return True

    async def aclose(self) -> None:
        await self.inner.aclose()
