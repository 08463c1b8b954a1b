"""One live stretto session per conversation, and what of its messages has been recorded.

A conversation is LangGraph's thread when the run's config names one
(`config["configurable"]["thread_id"]`): every run on that thread continues one session, so the
flow keeps the thread's history across the user's messages. Without a thread, each run is its
own session. Sessions are kept in a bounded table (least recently used closed first), so a
server with many threads holds a bounded number of sessions.

Messages are absorbed from the state LangGraph passes each hook. Messages get ids from LangGraph
(`add_messages`) and from LangChain (a model's reply), so each is recorded once however often a
hook sees it again. The first time a session sees a conversation whose state already holds
earlier turns (a thread resumed in a new process, or one closed for room), it records from the
latest user message on: the earlier part is in the session that saw it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from stretto_core import LiveSession

from stretto_langgraph.messages import content_text, turn_calls, turn_usage
from stretto_langgraph.ordering import CallOrder

MAX_OPEN = 256
"""Conversations kept open at once; beyond this the least recently used is closed."""


class Conversation:
    """A live session and the keys of the messages already recorded into it."""

    def __init__(self, live: LiveSession) -> None:
        self.live = live
        self.order = CallOrder()
        self._seen: set[str] = set()
        self._started = False
        self._lock = threading.Lock()

    def absorb(self, messages: Sequence[Any], *, model_turns: bool) -> None:
        """Record the user's messages not yet recorded, and the model's turns too when
        `model_turns` (a plain graph, where no model wrapper shows them as they happen)."""
        with self._lock:
            if not self._started:
                self._started = True
                start = _latest_user_message(messages)
                self._seen.update(_key(m) for m in messages[:start])
                fresh: Sequence[Any] = messages[start:]
            else:
                fresh = _unseen_tail(messages, self._seen)
            for message in fresh:
                if isinstance(message, HumanMessage):
                    key = _key(message)
                    if key not in self._seen:
                        self._seen.add(key)
                        self.live.user(content_text(message.content))
                elif model_turns and isinstance(message, AIMessage):
                    self._model_turn(message)

    def model_turn(self, message: AIMessage) -> None:
        """Record one turn the model just made (once, however often it is seen again)."""
        with self._lock:
            self._started = True
            self._model_turn(message)

    def _model_turn(self, message: AIMessage) -> None:
        key = _key(message)
        if key in self._seen:
            return
        self._seen.add(key)
        calls = turn_calls(message)
        self.order.turn([c.call_id for c in calls])
        self.live.llm_turn(text=str(message.text), calls=calls, usage=turn_usage(message))


def _key(message: Any) -> str:
    ident = getattr(message, "id", None)
    if isinstance(ident, str) and ident:
        return ident
    return f"{getattr(message, 'type', '?')}:{hash(content_text(getattr(message, 'content', '')))}"


def _latest_user_message(messages: Sequence[Any]) -> int:
    """Where the current run's part of a conversation starts: its latest user message."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            while index > 0 and isinstance(messages[index - 1], HumanMessage):
                index -= 1
            return index
    return len(messages)


def _unseen_tail(messages: Sequence[Any], seen: set[str]) -> Sequence[Any]:
    """The messages after the last one already recorded (messages only ever append)."""
    index = len(messages)
    while index > 0 and _key(messages[index - 1]) not in seen:
        index -= 1
    return messages[index:]


class Conversations:
    """The open conversations of one middleware or wrapper, by key, least recently used first."""

    def __init__(self, max_open: int = MAX_OPEN) -> None:
        if max_open < 1:
            raise ValueError(f"max_open must be at least 1, not {max_open!r}")
        self.max_open = max_open
        self._open: OrderedDict[str, Conversation] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Conversation | None:
        with self._lock:
            conversation = self._open.get(key)
            if conversation is not None:
                self._open.move_to_end(key)
            return conversation

    def get_or_open(self, key: str, start: Callable[[], LiveSession]) -> tuple[Conversation, bool]:
        """The conversation under `key`, opened with `start()` when there is none; and whether it is new."""
        closed: list[Conversation] = []
        with self._lock:
            conversation = self._open.get(key)
            if conversation is not None:
                self._open.move_to_end(key)
                return conversation, False
            conversation = Conversation(start())
            self._open[key] = conversation
            while len(self._open) > self.max_open:
                closed.append(self._open.popitem(last=False)[1])
        for old in closed:
            old.live.close()
        return conversation, True

    def end(self, key: str) -> Conversation | None:
        """Close and forget one conversation (a run without a thread has ended)."""
        with self._lock:
            conversation = self._open.pop(key, None)
        if conversation is not None:
            conversation.live.close()
        return conversation

    def close_all(self) -> None:
        with self._lock:
            open_now = list(self._open.values())
            self._open.clear()
        for conversation in open_now:
            conversation.live.close()

    def __len__(self) -> int:
        return len(self._open)
