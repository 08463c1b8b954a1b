"""Parallel calls of one model turn are absorbed in the order the model made them.

LangGraph runs the calls of one turn at once (threads on the sync path, tasks on the async
one), so their results come back in whatever order the tools finish. What the flow decides
after a result depends on the results before it, so stretto takes them in the model's order,
as a replay does: a call whose result is back waits, before its lookups, for the calls before
it in its turn. The wait costs the agent nothing (the tool step ends only when its last call
does) and cannot deadlock: every call is marked finished however it ends, a call already
answered in the state (a limit middleware's message) is never waited for, one that has not
started is waited for at most `START_GRACE`, and no wait exceeds `WAIT_CAP`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

WAIT_CAP = 30.0
"""Seconds a result waits at most for the calls before it (a safety net, not a budget)."""

START_GRACE = 1.0
"""Seconds a result waits for an earlier call of its turn to start (threads start in any order)."""


class CallOrder:
    """Which calls of which turn are running, and who waits for them."""

    def __init__(self, wait_cap: float = WAIT_CAP, start_grace: float = START_GRACE) -> None:
        self.wait_cap = wait_cap
        self.start_grace = start_grace
        self._cond = threading.Condition()
        self._where: dict[str, tuple[int, int]] = {}  # call id -> (turn, index in the turn)
        self._running: dict[int, set[int]] = {}  # turn -> indexes started and not finished
        self._pending: dict[int, set[int]] = {}  # turn -> indexes not started yet
        self._waiters: list[tuple[str, bool, asyncio.AbstractEventLoop, asyncio.Future]] = []
        self._turns = 0

    def turn(self, call_ids: Sequence[str]) -> None:
        """A model turn made these calls, in this order."""
        if len(call_ids) < 2:
            return
        with self._cond:
            self._forget_earlier_turns()  # a new model turn: the tool step before it has ended
            self._turns += 1
            for index, call_id in enumerate(call_ids):
                self._where[call_id] = (self._turns, index)
            self._pending[self._turns] = set(range(len(call_ids)))

    def _forget_earlier_turns(self) -> None:
        self._where.clear()
        self._pending.clear()
        self._running.clear()
        self._cond.notify_all()
        for _, _, loop, future in self._waiters:
            loop.call_soon_threadsafe(_resolve, future)
        self._waiters = []

    def start(self, call_id: str, answered: Sequence[str] = ()) -> None:
        """This call has started; `answered` are calls the state already holds results of."""
        with self._cond:
            for other in answered:
                self._settle(other)
            where = self._where.get(call_id)
            if where is not None:
                pending = self._pending.get(where[0], set())
                pending.discard(where[1])
                if not pending:
                    self._pending.pop(where[0], None)
                self._running.setdefault(where[0], set()).add(where[1])

    def _settle(self, call_id: str) -> None:
        where = self._where.pop(call_id, None)
        if where is None:
            return
        for table in (self._pending, self._running):
            indexes = table.get(where[0])
            if indexes is not None:
                indexes.discard(where[1])
                if not indexes:
                    table.pop(where[0], None)

    def finish(self, call_id: str) -> None:
        ready: list[tuple[str, bool, asyncio.AbstractEventLoop, asyncio.Future]] = []
        with self._cond:
            self._settle(call_id)
            self._cond.notify_all()
            waiting = []
            for waiter in self._waiters:
                (ready if self._clear(waiter[0], waiter[1]) else waiting).append(waiter)
            self._waiters = waiting
        for _, _, loop, future in ready:
            loop.call_soon_threadsafe(_resolve, future)

    def wait(self, call_id: str) -> None:
        """Block until the calls before this one in its turn have finished (sync path)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._clear(call_id, started_only=False), self.start_grace):
                self._cond.wait_for(lambda: self._clear(call_id), timeout=self.wait_cap)

    async def await_turn(self, call_id: str) -> None:
        """The same, awaiting (async path)."""
        if not await self._await(call_id, started_only=False, timeout=self.start_grace):
            await self._await(call_id, started_only=True, timeout=self.wait_cap)

    async def _await(self, call_id: str, *, started_only: bool, timeout: float) -> bool:
        loop = asyncio.get_running_loop()
        with self._cond:
            if self._clear(call_id, started_only):
                return True
            future = loop.create_future()
            waiter = (call_id, started_only, loop, future)
            self._waiters.append(waiter)
        try:
            await asyncio.wait_for(future, timeout)
            return True
        except asyncio.TimeoutError:
            return False
        finally:
            with self._cond:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def _clear(self, call_id: str, started_only: bool = True) -> bool:
        """No call before this one in its turn is running (nor, unless `started_only`, yet to start)."""
        where = self._where.get(call_id)
        if where is None:
            return True
        turn, mine = where
        if any(index < mine for index in self._running.get(turn, ())):
            return False
        return started_only or not any(index < mine for index in self._pending.get(turn, ()))


def _resolve(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)
