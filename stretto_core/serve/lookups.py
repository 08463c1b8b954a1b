"""Make an engine session's lookups with the caller's own tool function, within time limits.

Algorithm 1, one lookup at a time: decide, call, absorb, decide again. Every SDK here is
async-first, so the main path awaits the caller's tool; a sync twin serves sync SDK paths.
A lookup that raises, hangs past its timeout or returns garbage is absorbed as a failed lookup
and never breaks, changes, or delays past the budget the agent's own result: the wait is bounded
even for a call that ignores its cancel, a sync call runs on a daemon thread of stretto's own
(`serve/workers.py`), and a tool whose lookup timed out cools down (no lookups of it for a while,
recorded as a `cooldown` refusal).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from stretto_core.serve.results import is_error_result, result_text
from stretto_core.sessions.model import Lookup, Refusal
from stretto_core.serve.workers import bounded, start, wait

from stretto_core.serve.defaults import CALL_BUDGET as CALL_BUDGET, LOOKUP_TIMEOUT as LOOKUP_TIMEOUT  # noqa: E402

AsyncCallTool = Callable[[str, dict[str, Any]], Awaitable[Any]]
SyncCallTool = Callable[[str, dict[str, Any]], Any]


@dataclass(frozen=True)
class Limits:
    """Time limits of the lookups after one tool result."""

    lookup_timeout: float = LOOKUP_TIMEOUT
    call_budget: float = CALL_BUDGET

    def __post_init__(self) -> None:
        for name in ("lookup_timeout", "call_budget"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and value > 0 and value == value and value != float("inf")):
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")


def _outcome(value: Any) -> tuple[str, bool]:
    """A tool's return as (text, error): (text, error) pairs as given, anything else normalised."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], bool):
        return result_text(value[0]), value[1]
    return result_text(value), is_error_result(value)


@dataclass
class _Round:
    """The lookups after one tool result: the budget's deadline and what was made so far."""

    session: Any
    after_call_id: str | None
    limits: Limits
    made: list[Lookup] = field(default_factory=list)
    deadline: float = 0.0

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.limits.call_budget

    def next(self) -> tuple[Any, float] | None:
        """The next decision and the time it may take, or None when the flow or the budget stops."""
        if self.session.engine.config.shadow:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.session.note_cut("call_budget", f"the lookups after one call took their budget of "
                                                 f"{self.limits.call_budget:.3g} s")
            return None
        decision = self.session.decide()
        return None if decision is None else (decision, min(self.limits.lookup_timeout, left))

    def absorb(self, decision: Any, content: str, error: bool, abandoned: bool = False,
               timed_out: bool = False) -> None:
        lookup = self.session.add_lookup(decision, content, error, self.after_call_id)
        # a lookup stretto gave up on is recorded as such, and never shown to the agent
        self.made.append(lookup.model_copy(update={"abandoned": True}) if abandoned else lookup)
        if timed_out:
            self.session.note_refusal(Refusal(tool=lookup.tool, reason="lookup_timeout", detail=content,
                                              lookup_call_id=lookup.call_id))
            cool_down = getattr(self.session, "cool_down", None)
            if cool_down is not None:
                cool_down(lookup.tool)


def _timed_out(timeout: float) -> str:
    return f"Error: the lookup took longer than {timeout:.3g} s and was abandoned"


def _raised(exc: BaseException) -> str:
    return f"Error: {type(exc).__name__}: {exc}"[:500]


async def run_lookups_async(session: Any, after_call_id: str | None, call_tool: AsyncCallTool,
                            limits: Limits = Limits()) -> list[Lookup]:
    """Decide, make and absorb lookups one at a time until the flow stops or time runs out."""
    round_ = _Round(session, after_call_id, limits)
    while (step := round_.next()) is not None:
        decision, timeout = step
        try:
            outcome = _outcome(await bounded(call_tool(decision.tool, dict(decision.arguments)), timeout))
        except (TimeoutError, asyncio.TimeoutError):
            round_.absorb(decision, _timed_out(timeout), True, abandoned=True, timed_out=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a failed lookup never breaks the agent's call
            round_.absorb(decision, _raised(exc), True, abandoned=True)
        else:
            round_.absorb(decision, *outcome)
    return round_.made


def run_lookups_sync(session: Any, after_call_id: str | None, call_tool: SyncCallTool,
                     limits: Limits = Limits()) -> list[Lookup]:
    """The same for a sync tool function: each lookup runs on a daemon thread of stretto's own
    (`serve/workers.py`), so one that hangs is abandoned at its timeout (its thread left to end
    on its own, never joined at exit) and the caller's thread goes on."""
    round_ = _Round(session, after_call_id, limits)
    while (step := round_.next()) is not None:
        decision, timeout = step
        try:
            outcome = _outcome(wait(start(call_tool, decision.tool, dict(decision.arguments)), timeout))
        except TimeoutError:
            round_.absorb(decision, _timed_out(timeout), True, abandoned=True, timed_out=True)
        except Exception as exc:  # noqa: BLE001 - a failed lookup never breaks the agent's call
            round_.absorb(decision, _raised(exc), True, abandoned=True)
        else:
            round_.absorb(decision, *outcome)
    return round_.made
