"""Model turns from the SDK's message stream, held until a hook can record them in order.

No hook shows a model turn: PostToolUse sees one call, Stop sees the last reply's text. The
message stream the user iterates (`query()`, `ClaudeSDKClient.receive_response()`) does show
each turn, split into one `AssistantMessage` per content block with a shared `message_id`.
Passing the stream through `ClaudeHooks.watch()` lets the hooks record whole turns (text, all
their calls, input tokens) at the moment the turn's first result arrives, so the session stays
in the order the agent lived it. Without it, stretto records one inferred turn per call.

The CLI writes a turn's messages to its output before it runs the turn's tools, so a stream
that is read as it comes is ahead of the hooks; a turn the hooks reach first is inferred.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class StreamCall:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class StreamTurn:
    """One model turn as the stream showed it so far."""

    message_id: str
    text: list[str] = field(default_factory=list)
    calls: list[StreamCall] = field(default_factory=list)
    input_tokens: int | None = None

    @property
    def reply(self) -> bool:
        return not self.calls


class StreamTurns:
    """Turns seen in the message stream per Claude session, not yet recorded."""

    def __init__(self) -> None:
        self.watched: set[str] = set()
        self.models: dict[str, str] = {}
        self._open: dict[str, dict[str, StreamTurn]] = {}   # session -> message id -> turn
        self._by_call: dict[tuple[str, str], StreamTurn] = {}

    def observe(self, message: Any) -> None:
        """Take in one message of the stream (any type; those that are no model turn are skipped)."""
        kind = type(message).__name__
        if kind == "SystemMessage":
            data = getattr(message, "data", None) or {}
            session = data.get("session_id")
            if session and getattr(message, "subtype", None) == "init":
                self.watched.add(session)
                if isinstance(data.get("model"), str):
                    self.models[session] = data["model"]
            return
        if kind != "AssistantMessage" or getattr(message, "parent_tool_use_id", None):
            return  # a subagent's turn belongs to the subagent, which no hook of ours records as ours
        if getattr(message, "error", None):
            return  # an API error the CLI reports as a message: no model turn
        session = getattr(message, "session_id", None)
        message_id = getattr(message, "message_id", None)
        if not session or not message_id:
            return
        self.watched.add(session)
        if isinstance(getattr(message, "model", None), str):
            self.models.setdefault(session, message.model)
        turns = self._open.setdefault(session, {})
        turn = turns.get(message_id)
        if turn is None:
            turn = turns[message_id] = StreamTurn(message_id=message_id)
            turn.input_tokens = _input_tokens(getattr(message, "usage", None))
        for block in getattr(message, "content", None) or []:
            name = type(block).__name__
            if name == "TextBlock" and getattr(block, "text", ""):
                turn.text.append(block.text)
            elif name == "ToolUseBlock":
                call = StreamCall(block.id, block.name, dict(block.input or {}))
                turn.calls.append(call)
                self._by_call[(session, block.id)] = turn

    def take_for_call(self, session: str, call_id: str) -> StreamTurn | None:
        """The unrecorded turn that made this call (and is now recorded), or None."""
        turn = self._by_call.pop((session, call_id), None)
        if turn is None:
            return None
        self._drop(session, turn)
        return turn

    def take_reply(self, session: str) -> StreamTurn | None:
        """The latest unrecorded turn with no calls: the reply that ended the run."""
        turns = self._open.get(session) or {}
        replies = [t for t in turns.values() if t.reply]
        for turn in replies:
            self._drop(session, turn)
        return replies[-1] if replies else None

    def forget(self, session: str) -> None:
        self._open.pop(session, None)
        for key in [k for k in self._by_call if k[0] == session]:
            del self._by_call[key]

    def _drop(self, session: str, turn: StreamTurn) -> None:
        turns = self._open.get(session)
        if turns is not None:
            turns.pop(turn.message_id, None)
        for call in turn.calls:
            self._by_call.pop((session, call.call_id), None)


def _input_tokens(usage: Any) -> int | None:
    """Every input token of the turn (fresh and cached); output tokens are not final yet when the
    CLI writes the message, so they are not taken."""
    if not isinstance(usage, dict):
        return None
    parts = [usage.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    counted = [p for p in parts if isinstance(p, int)]
    return sum(counted) if counted else None
