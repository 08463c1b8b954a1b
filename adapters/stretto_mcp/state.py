"""The relay's small shared types: how a run ends, a host request in flight, the options."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from enum import IntEnum
from typing import Any


class ExitStatus(IntEnum):
    """How a proxy run ended (its process exit status)."""

    CLEAN = 0
    """The host closed the connection with nothing in flight."""
    INTERNAL = 1
    """The proxy itself failed (a bug): see the traceback on stderr."""
    SERVER_GONE = 3
    """The server exited, crashed or closed its output; the host got an error for each request in flight."""
    HOST_LEFT = 4
    """The host disconnected with requests in flight; they were cancelled at the server."""
    SERVER_HUNG = 5
    """The server left a request unanswered past `--server-timeout`; the host got errors, the server was stopped."""
    MALFORMED = 6
    """Otherwise clean, but a side sent messages that were not JSON-RPC (each one reported on stderr)."""


class ServerGone(Exception):
    """The server can no longer answer (it exited, hung, or the proxy is stopping)."""


@dataclass
class _Pending:
    """A host request the server has not answered yet."""

    method: str
    message: dict[str, Any]
    started: float
    future: asyncio.Future | None = None
    call_id: str | None = None
    task: asyncio.Task | None = None
    cancelled: bool = False
    at_server: bool = True
    notices: int = 0
    """The server's tool-change notices that had come when the request went out."""


@dataclass
class RelayOptions:
    server_timeout: float = 600.0
    """A host request the server leaves unanswered this long (no progress either) means it hung."""
    listing_timeout: float = 10.0
    """How long the proxy's own `tools/list` may take before lookups go on without it."""
