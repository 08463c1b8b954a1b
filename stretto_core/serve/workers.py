"""Where stretto's lookups run: threads of its own, that nothing waits on past their budget.

A lookup calls a tool the agent did not ask for; a sync tool that never returns must not hang
the agent, starve its tools, or keep the process alive. So a lookup of a sync tool never runs on
the agent's thread, the SDK's or asyncio's default executor (whose threads the agent's own tools
share, and which the interpreter joins at exit), but on a fresh **daemon** thread of stretto's
(`start`); the caller waits for it at most its time (`wait`, `wait_async`) and then goes on, the
thread left to finish on its own. A tool wrapped in an async SDK call (which would hand the sync
function to the loop's default executor) runs in an event loop of its own on such a thread, whose
default executor is daemon threads too (`start_coroutine`).

At most `MAX_RUNNING` such threads run at once: past that (tools that hang, one after another),
a lookup is refused at once (`WorkersBusy`) rather than starting yet another thread. A tool whose
lookup timed out cools down (`Cooldowns`): it is not looked up again for `COOLDOWN_SECONDS`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import itertools
import threading
import time
from typing import Any, Awaitable, Callable, TypeVar

T = TypeVar("T")

MAX_RUNNING = 32
"""stretto's lookup threads that may run at once; past it a new lookup is refused, not started."""

COOLDOWN_SECONDS = 60.0
"""How long a tool whose lookup timed out is not looked up again (first time; it doubles after)."""

MAX_COOLDOWN_SECONDS = 15 * 60.0
"""The longest cooldown a tool that keeps timing out gets."""

_running = 0
_running_lock = threading.Lock()
_names = itertools.count(1)


class WorkersBusy(RuntimeError):
    """Too many of stretto's lookup threads still run (tools that hang): no new one is started."""


def running() -> int:
    """How many of stretto's lookup threads run now."""
    return _running


def start(fn: Callable[..., T], *args: Any, **kwargs: Any) -> "concurrent.futures.Future[T]":
    """Run `fn(*args, **kwargs)` on a new daemon thread, in a copy of the caller's context (its
    context variables: an SDK's run config, tracing); its outcome lands in the returned future."""
    global _running
    with _running_lock:
        if _running >= MAX_RUNNING:
            raise WorkersBusy(f"{_running} lookups of stretto still run (tools that do not return); "
                              "no new lookup is started until they end")
        _running += 1
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    context = contextvars.copy_context()

    def run() -> None:
        global _running
        try:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(context.run(fn, *args, **kwargs))
                except BaseException as exc:  # noqa: BLE001 - handed to whoever waits, if anyone
                    future.set_exception(exc)
        finally:
            with _running_lock:
                _running -= 1

    thread = threading.Thread(target=run, name=f"stretto-lookup-{next(_names)}", daemon=True)
    try:
        thread.start()
    except BaseException:
        with _running_lock:
            _running -= 1
        raise
    return future


class _DaemonExecutor(concurrent.futures.ThreadPoolExecutor):
    """A worker loop's default executor: each job on a daemon thread of its own (via `start`'s
    thread, without its count: it runs inside a lookup already counted), never joined at exit."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> "concurrent.futures.Future[T]":
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        context = contextvars.copy_context()

        def run() -> None:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(context.run(fn, *args, **kwargs))
                except BaseException as exc:  # noqa: BLE001
                    future.set_exception(exc)

        threading.Thread(target=run, name=f"stretto-lookup-{next(_names)}-sync", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        return None  # nothing to join: a job still running is abandoned with its daemon thread


def _run_coroutine(make: Callable[[], Awaitable[T]]) -> T:
    loop = asyncio.new_event_loop()
    loop.set_default_executor(_DaemonExecutor(max_workers=1))
    try:
        return loop.run_until_complete(make())  # type: ignore[arg-type]
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


def start_coroutine(make: Callable[[], Awaitable[T]]) -> "concurrent.futures.Future[T]":
    """Run the coroutine `make()` returns in an event loop of its own on a daemon thread (`start`):
    for an SDK's async wrapper of a sync tool, which hands the function to the running loop's
    default executor; here that executor is daemon threads, so the process can exit while it hangs."""
    return start(_run_coroutine, make)


async def in_worker(make: Callable[[], Awaitable[T]]) -> T:
    """Await `make()` run by `start_coroutine`; a cancel of the caller ends the wait at once (the
    worker's loop runs on, unwaited)."""
    return await asyncio.wrap_future(start_coroutine(make))


def wait(future: "concurrent.futures.Future[T]", timeout: float) -> T:
    """The outcome of a `start`ed call within `timeout` s; `TimeoutError` after, the call left to run."""
    try:
        return future.result(timeout=max(0.0, timeout))
    except concurrent.futures.TimeoutError:
        raise TimeoutError(f"no outcome within {timeout:.3g} s") from None


async def wait_async(future: "concurrent.futures.Future[T]", timeout: float) -> T:
    """The same from a coroutine: the loop goes on meanwhile, and waits no longer than `timeout`."""
    wrapped = asyncio.wrap_future(future)
    done, _ = await asyncio.wait({wrapped}, timeout=max(0.0, timeout))
    if not done:
        wrapped.cancel()  # only the wrapper: the thread cannot be stopped, and nobody waits on it
        raise TimeoutError(f"no outcome within {timeout:.3g} s")
    return wrapped.result()


async def bounded(awaitable: Awaitable[T], timeout: float) -> T:
    """Await `awaitable` at most `timeout` s, whatever it does with a cancel: past the time it is
    cancelled and abandoned, not awaited (`asyncio.wait_for` waits until a cancel is honoured, so
    a call that ignores or defers it, e.g. one waiting on a worker thread, would hang the agent)."""
    task = asyncio.ensure_future(awaitable)
    if not isinstance(task, asyncio.Task):  # a plain future: cancelling it ends it at once
        return await _bounded_future(task, timeout)
    try:
        done, _ = await asyncio.wait({task}, timeout=max(0.0, timeout))
    except BaseException:
        task.cancel()
        task.add_done_callback(_quiet)
        raise
    if not done:
        task.cancel()
        task.add_done_callback(_quiet)
        raise TimeoutError(f"no outcome within {timeout:.3g} s")
    return task.result()


async def _bounded_future(future: "asyncio.Future[T]", timeout: float) -> T:
    """`bounded` for a plain future (no task runs it, so a cancel ends it at once): awaited as
    it is, and cancelled at the timeout; no waiter and no task between it and the caller."""
    expired = False

    def expire() -> None:
        nonlocal expired
        if not future.done():
            expired = True
            future.cancel()

    timer = asyncio.get_running_loop().call_later(max(0.0, timeout), expire)
    try:
        return await future
    except asyncio.CancelledError:
        task = asyncio.current_task()
        cancelling = getattr(task, "cancelling", None)  # 3.11+: the caller's own cancel wins
        if expired and not (cancelling is not None and cancelling()):
            raise TimeoutError(f"no outcome within {timeout:.3g} s") from None
        raise
    finally:
        timer.cancel()


def _quiet(task: "asyncio.Future[Any]") -> None:
    """Retrieve an abandoned task's outcome, so asyncio never logs it as never retrieved."""
    if not task.cancelled():
        task.exception()


class Cooldowns:
    """Tools whose lookups timed out, and until when none of them is looked up again.

    Shared by every session an engine serves: a tool that hangs for one conversation hangs for
    the next too. A tool that times out again right after its cooldown cools down twice as long.
    """

    def __init__(self, seconds: float = COOLDOWN_SECONDS, longest: float = MAX_COOLDOWN_SECONDS) -> None:
        self.seconds = seconds
        self.longest = longest
        self._until: dict[str, float] = {}
        self._length: dict[str, float] = {}
        self._lock = threading.Lock()

    def timed_out(self, tool: str) -> float:
        """`tool`'s lookup timed out: it cools down; returns for how many seconds."""
        with self._lock:
            now = time.monotonic()
            last = self._length.get(tool)
            again = last is not None and now - self._until.get(tool, now) < 2 * last
            length = min(self.longest, 2 * last) if again and last is not None else self.seconds
            self._length[tool] = length
            self._until[tool] = now + length
            return length

    def cooling(self) -> frozenset[str]:
        """The tools not to look up now."""
        if not self._until:
            return frozenset()
        now = time.monotonic()
        with self._lock:
            return frozenset(tool for tool, until in self._until.items() if until > now)

    def left(self, tool: str) -> float:
        """Seconds until `tool` may be looked up again (0 when it may now)."""
        return max(0.0, self._until.get(tool, 0.0) - time.monotonic())
