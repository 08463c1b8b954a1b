"""Which stretto session a piece of a run belongs to.

The SDK hands hooks the run's `RunContextWrapper` and tools a `ToolContext` made from it; both
hold the run's one `Usage` object, so that object names the run. Each run gets its own stretto
session, unless `session_key` names a conversation: runs of one conversation then share one
session (kept open for the next run, the least recently used closed beyond a limit). A run's
state is dropped when its `Usage` is garbage collected.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stretto_core import LiveSession

log = logging.getLogger("stretto.openai_agents")

RECENT_SESSIONS = 64
"""How many of the latest sessions an instrumented agent keeps for inspection (`runtime.sessions`)."""


@dataclass(eq=False)
class RunState:
    """One `Runner.run`: its session, whether its first model call was seen, what it recorded."""

    live: LiveSession | None = None
    conversation: str | None = None
    asked: bool = False
    recorded: set[str] = field(default_factory=set)
    listed: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    """MCP tools this run was shown: name -> (the instrumented server, the MCP `Tool`)."""


class Runs:
    """Run states by run, and conversation sessions by conversation id."""

    def __init__(self, max_conversations: int) -> None:
        self.max_conversations = max_conversations
        self._runs: dict[int, RunState] = {}
        self._conversations: OrderedDict[str, LiveSession] = OrderedDict()
        self._lock = threading.Lock()
        self.recent: deque[LiveSession] = deque(maxlen=RECENT_SESSIONS)

    def state(self, ctx: Any) -> RunState:
        """The state of the run `ctx` (a run context or a tool context) belongs to."""
        usage = ctx.usage
        key = id(usage)
        with self._lock:
            run = self._runs.get(key)
            if run is None:
                run = self._runs[key] = RunState()
                weakref.finalize(usage, self._forget, key, run)
            return run

    def session(self, run: RunState, conversation: str | None, make: Callable[[str | None], LiveSession]) -> LiveSession:
        """The run's session: its conversation's when it has one, else a new one of its own."""
        if run.live is not None:
            return run.live
        with self._lock:
            live = self._conversations.get(conversation) if conversation is not None else None
            if live is None:
                live = make(conversation)
                self.recent.append(live)
                if conversation is not None:
                    self._conversations[conversation] = live
                    while len(self._conversations) > self.max_conversations:
                        _, old = self._conversations.popitem(last=False)
                        old.close()
            elif conversation is not None:
                self._conversations.move_to_end(conversation)
            run.live, run.conversation = live, conversation
            return live

    def close_all(self) -> None:
        """Close every session still open (their files stay complete and readable)."""
        with self._lock:
            sessions = {id(s): s for s in [*self.recent, *self._conversations.values()]}
            sessions.update({id(r.live): r.live for r in self._runs.values() if r.live is not None})
        for live in sessions.values():
            live.close()

    def _forget(self, key: int, run: RunState) -> None:
        with self._lock:
            if self._runs.get(key) is run:
                del self._runs[key]
        if run.live is not None:
            run.live.close()


def conversation_of(ctx: Any, session_key: str | Callable[[Any], Any] | None) -> str | None:
    """The conversation id `session_key` finds for this run, or None (a session of its own)."""
    if session_key is None:
        return None
    try:
        if callable(session_key):
            value = session_key(ctx)
        else:
            app = ctx.context
            value = app.get(session_key) if isinstance(app, Mapping) else getattr(app, session_key, None)
    except Exception as exc:  # noqa: BLE001 - a broken key function never breaks the run
        log.warning("stretto: session_key failed (%s); this run is a session of its own", exc)
        return None
    return None if value is None else str(value)
