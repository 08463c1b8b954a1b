"""One stretto live session per ADK session, kept across the session's runs.

An ADK session spans many `Runner.run_async` calls (one per user message), and a flow decides
from the whole session so far, so its live session lives as long as the ADK session does, not
one run. ADK says when a run ends (`after_run_callback`) but never when a session ends, so:

- at the end of each run the session file is closed (complete and readable, its file handle
  released); the live session stays, and the next run of the same session appends to it;
- a live session ends when the app says so (`StrettoPlugin.end_session(session_id)`), when the
  runner closes (`Runner.close()` closes its plugins), or when more than `max_sessions` are open
  (the least recently used is closed; if that session comes back, it starts afresh in the same
  file, without the flow's memory of what came before).

Sessions are keyed by (app name, user id, session id), as ADK's session services key them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any

from stretto_core import LiveSession, Stretto

from stretto_adk.tools import model_name, session_authority

log = logging.getLogger("stretto.adk")

MAX_SESSIONS = 1024
"""Live sessions kept open at once before the least recently used is closed."""

Key = tuple[str, str, str]


def session_key(context: Any) -> Key:
    """The key of the ADK session of an invocation context, or of a callback or tool context."""
    session = context.session
    return (str(session.app_name), str(session.user_id), str(session.id))


def invocation_of(context: Any) -> Any:
    """The invocation context behind a callback or tool context (an invocation context as is)."""
    get = getattr(context, "get_invocation_context", None)
    return get() if callable(get) else context


class LiveSessions:
    """The open live sessions of one plugin, least recently used first."""

    def __init__(self, stretto: Stretto, max_sessions: int = MAX_SESSIONS) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self.stretto = stretto
        self.max_sessions = max_sessions
        self._open: OrderedDict[Key, LiveSession] = OrderedDict()
        self._starting: dict[Key, asyncio.Future[LiveSession]] = {}

    def __len__(self) -> int:
        return len(self._open)

    def find(self, session_id: str) -> list[LiveSession]:
        """The open live sessions of an ADK session id (one, unless two apps or users share it)."""
        return [live for key, live in self._open.items() if key[2] == session_id]

    async def get(self, context: Any) -> LiveSession:
        """The live session of a context's ADK session, started on first sight of that session.

        `context` is an invocation, callback or tool context; the invocation context (a copy,
        in ADK 2) is fetched only to start a session.
        """
        key = session_key(context)
        live = self._open.get(key)
        if live is not None:
            self._open.move_to_end(key)
            return live
        starting = self._starting.get(key)
        if starting is None:  # parallel callbacks of a new session wait for one start
            starting = asyncio.ensure_future(self._start(key, invocation_of(context)))
            self._starting[key] = starting
        return await asyncio.shield(starting)

    async def _start(self, key: Key, invocation_context: Any) -> LiveSession:
        try:
            tools = await session_authority(invocation_context)
            agent = invocation_context.agent
            root = getattr(agent, "root_agent", agent)
            live = self.stretto.session(key[2], tools=tools if tools.tools else None,
                                        agent_model=model_name(agent),
                                        labels={"adk_app": key[0], "adk_agent": str(getattr(root, "name", ""))})
            self._open[key] = live
            while len(self._open) > self.max_sessions:
                _, oldest = self._open.popitem(last=False)
                oldest.close()
            return live
        finally:
            self._starting.pop(key, None)

    async def relist(self, context: Any, live: LiveSession, timeout: float) -> None:
        """Read the agents' tools again before a lookup round and take a changed listing into
        the session's guard: lookups are judged on the tools as they are now."""
        live.update_tools(await session_authority(invocation_of(context), timeout))

    def end_run(self, invocation_context: Any) -> None:
        """A run ended: write out and close the session's file; the live session stays."""
        live = self._open.get(session_key(invocation_context))
        if live is not None:
            live.close()

    def end(self, session_id: str) -> int:
        """End the live sessions of an ADK session id; how many there were."""
        keys = [key for key in self._open if key[2] == session_id]
        for key in keys:
            self._open.pop(key).close()
        return len(keys)

    def close_all(self) -> None:
        while self._open:
            _, live = self._open.popitem(last=False)
            try:
                live.close()
            except Exception as exc:  # noqa: BLE001 - closing one never stops closing the rest
                log.warning("stretto: closing session %s failed: %s", live.session_id, exc)
