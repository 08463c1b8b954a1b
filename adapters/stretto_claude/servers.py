"""The in-process (SDK) MCP servers of the agent, reachable from any hook for lookups.

A lookup goes through the server's own tools, exactly as the agent's call did: an in-memory
`mcp.Client` connected to the `mcp.server.Server` that `create_sdk_mcp_server` built (or one
the user built). Opening a client per lookup costs a handshake, so one client per server is
kept open by a task of its own (an anyio client must be closed by the task that opened it,
and hooks run in short-lived tasks). Clients belong to one event loop: a new loop gets new
ones. External servers (stdio, http) run in other processes whose state a second session
would not share, so their tools are never looked up.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Mapping

log = logging.getLogger("stretto.claude")


class ServerLink:
    """One open in-memory client session to one in-process server, owned by its own task."""

    def __init__(self, name: str, server: Any) -> None:
        self.name = name
        self.server = server
        self._client: Any = None
        self._failure: BaseException | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._own(), name=f"stretto-mcp-{name}")

    async def _own(self) -> None:
        from mcp import Client

        try:
            async with Client(self.server, cache=None) as client:
                self._client = client
                self._ready.set()
                await self._stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - a server that will not start serves no lookup
            self._failure = exc
            log.warning("stretto: cannot connect to the in-process MCP server %r: %s", self.name, exc)
        finally:
            self._client = None
            self._ready.set()

    async def client(self) -> Any:
        await self._ready.wait()
        if self._client is None:
            raise RuntimeError(f"in-process MCP server {self.name!r} is not connected: {self._failure}")
        return self._client

    async def list_tools(self) -> list[Any]:
        client = await self.client()
        tools: list[Any] = []
        cursor = None
        for _ in range(100):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        client = await self.client()
        return await client.call_tool(tool, arguments)

    async def aclose(self) -> None:
        self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), 5.0)
        except (asyncio.TimeoutError, asyncio.CancelledError, Exception):  # noqa: BLE001
            self._task.cancel()


class InProcessServers:
    """The agent's configured MCP servers; the in-process ones can be listed and called."""

    def __init__(self, configs: Mapping[str, Any] | None) -> None:
        self.names: list[str] = list(configs or {})
        self.sdk: dict[str, Any] = {}
        for name, cfg in (configs or {}).items():
            if isinstance(cfg, Mapping) and cfg.get("type") == "sdk" and cfg.get("instance") is not None:
                self.sdk[name] = cfg["instance"]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._links: dict[str, ServerLink] = {}

    def _link(self, name: str) -> ServerLink:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # links of a finished loop are gone with it
            self._loop, self._links = loop, {}
        link = self._links.get(name)
        if link is None:
            link = self._links[name] = ServerLink(name, self.sdk[name])
        return link

    async def listing(self, *, strict: bool = False) -> dict[str, list[Any]]:
        """Each in-process server's tools (MCP `Tool` models); a server that fails lists none
        (`strict=True`: its failure is raised instead, so the caller makes no lookup at all)."""
        out: dict[str, list[Any]] = {}
        for name in self.sdk:
            try:
                out[name] = await self._link(name).list_tools()
            except Exception as exc:  # noqa: BLE001
                if strict:
                    raise
                log.warning("stretto: cannot list the tools of MCP server %r (%s); none of them is "
                            "looked up", name, exc)
                out[name] = []
        return out

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        """Call one tool of one in-process server; returns its MCP `CallToolResult`."""
        return await self._link(server).call(tool, arguments)

    async def aclose(self) -> None:
        links, self._links = list(self._links.values()), {}
        for link in links:
            await link.aclose()
