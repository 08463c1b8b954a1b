"""stretto's lookups in the operator's own tracing: one OpenTelemetry span per lookup.

The OpenTelemetry GenAI conventions ask a library to instrument the tool calls no automatic
instrumentation covers, and stretto's lookups are exactly those. Each lookup becomes an
`execute_tool {tool}` span (`gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`,
named as `sessions/ingest/otel.py` reads them: `sessions/genai.py`, so stretto's own spans ingest back) with
stretto's attributes: the triggering call's id and tool, the site, the score, and the outcome:

    used     the lookup returned and the agent did not ask for it again before its next write
    detour   the agent made the same call again after all (it did not use what it had)
    failed   the tool returned an error or raised
    cut      it outlived its time limit, or a budget stopped it before it was made
    refused  a guard would not make it

A span is parented to the context current when the agent's call returned (the `execute_tool`
span of that call, in SDKs that open one, as ADK does; the proxy takes the host's
`_meta.traceparent`).

Timing, honestly: a span's start and end are the lookup's own call (taken around the tool call,
never the time the span is written). A failed, cut or refused lookup's span is written at once.
A returned lookup's outcome is known only later (`stretto.outcome.decided_by`): `repeat` when
the agent makes the same call again (detour), `write` at the agent's next write or tool of
unknown kind, `session_end` when the session closes (both: used). Its span is written then, so
an exporter receives it after its parent span may have ended, and a process that dies before
its session closes loses the spans still waiting (docs/privacy.md). A lookup whose call was
never timed (none today) is written with the time its outcome was known and
`stretto.timing=unmeasured`, not with made-up times. A counter `stretto.lookups` counts
lookups by outcome when the outcome is known.

Only when `opentelemetry-api` is importable: the import is tried once, lazily, and without it
every call here returns at once. SDKs with tracing of their own add their native span through a
`NativeSpans` (OpenAI Agents: `custom_span`). Each lookup is also one DEBUG record on the
`stretto.lookups` logger.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol

from stretto_core.sessions.genai import CALL_ID, OPERATION, TOOL_NAME
from stretto_core.sessions.model import Lookup, Refusal

log = logging.getLogger("stretto.lookups")

OUTCOMES = ("used", "detour", "failed", "cut", "refused")
SPAN_PREFIX = "execute_tool"
COUNTER = "stretto.lookups"
TRIGGER_CALL_ID = "stretto.trigger.call_id"
TRIGGER_TOOL = "stretto.trigger.tool"
SITE = "stretto.site"
SCORE = "stretto.score"
OUTCOME = "stretto.outcome"
SESSION_ID = "stretto.session.id"
REFUSAL_REASON = "stretto.refusal.reason"
DECIDED_BY = "stretto.outcome.decided_by"
DECIDED = ("at_once", "repeat", "write", "session_end")
"""When the outcome was known: at_once (failed, cut, refused), repeat (detour), write or session_end (used)."""
TIMING = "stretto.timing"
_CUT_REASONS = frozenset({"call_limit", "session_limit", "call_budget", "lookup_timeout"})

_API: Any = None


def otel() -> Any:
    """The OpenTelemetry API modules, or None when `opentelemetry-api` is not installed (tried once)."""
    global _API
    if _API is None:
        try:
            from opentelemetry import context, metrics, propagate, trace
        except ImportError:
            _API = False
        else:
            _API = (context, metrics, propagate, trace)
    return _API or None


class NativeSpans(Protocol):
    """An SDK's own tracing (OpenAI Agents): where the triggering call's span is, and one span per lookup."""

    def current(self) -> Any: ...

    def emit(self, parent: Any, name: str, attributes: dict[str, Any], start_ns: int, end_ns: int) -> None: ...


@dataclass
class Trigger:
    """The agent's call whose result carries the lookups: its id and tool, its span's context."""

    call_id: str
    tool: str
    context: Any = None
    native: Any = None
    times: list[list[int]] = field(default_factory=list)
    """[start, end] in ns since the epoch, per lookup made, in order (sequential)."""


@dataclass
class _Pending:
    trigger: Trigger
    lookup: Lookup
    start_ns: int
    end_ns: int
    measured: bool = True


def trigger(call_id: str, tool: str, carrier: dict[str, Any] | None = None,
            native: NativeSpans | None = None) -> Trigger:
    """Capture the context of the agent's call now (or from a W3C `traceparent` carrier)."""
    api = otel()
    context = None
    if api is not None:
        ctx_mod, _metrics, propagate, _trace = api
        context = ctx_mod.get_current()
        if isinstance(carrier, dict) and isinstance(carrier.get("traceparent"), str):
            try:
                context = propagate.extract({k: v for k, v in carrier.items() if isinstance(v, str)},
                                            context=context)
            except Exception:  # noqa: BLE001 - a bad carrier from a host never breaks the call
                pass
    current = None
    if native is not None:
        try:
            current = native.current()
        except Exception:  # noqa: BLE001
            current = None
    return Trigger(call_id, tool, context, current)


def timed_async(trig: Trigger, call_tool: Callable[[str, dict[str, Any]], Awaitable[Any]]):  # noqa: ANN201
    """`call_tool`, noting when each lookup started and ended (for its span). A tool function
    that returns a future (the proxy's lookups) has that very future returned, ended by its
    done callback: wrapping it in a coroutine would cost the lookup a task to await it."""

    def call(name: str, arguments: dict[str, Any]) -> Awaitable[Any]:
        times = [time.time_ns(), 0]
        trig.times.append(times)
        try:
            started = call_tool(name, arguments)
        except BaseException:
            times[1] = time.time_ns()
            raise
        if callable(getattr(started, "add_done_callback", None)):
            started.add_done_callback(lambda _: times.__setitem__(1, time.time_ns()))  # type: ignore[attr-defined]
            return started
        return _ended(started, times)

    return call


async def _ended(awaitable: Awaitable[Any], times: list[int]) -> Any:
    """`awaitable`'s outcome, its end time noted however it ends."""
    try:
        return await awaitable
    finally:
        times[1] = time.time_ns()


def timed_sync(trig: Trigger, call_tool: Callable[[str, dict[str, Any]], Any]):  # noqa: ANN201
    """The same for a sync tool function."""

    def call(name: str, arguments: dict[str, Any]) -> Any:
        times = [time.time_ns(), 0]
        trig.times.append(times)
        try:
            return call_tool(name, arguments)
        finally:
            times[1] = time.time_ns()

    return call


def outcome_of(lookup: Lookup, timed_out: bool) -> str | None:
    """failed / cut now; None for a lookup that returned (used or detour, known later)."""
    if timed_out:
        return "cut"
    if lookup.error or lookup.abandoned:
        return "failed"
    return None


class SessionSpans:
    """The spans of one live session: written at once for a failed, cut or refused lookup, and
    when its outcome is known for one that returned (a repeat, the next write, the session's end)."""

    def __init__(self, session_id: str, native: NativeSpans | None = None) -> None:
        self.session_id = session_id
        self.native = native
        self.pending: dict[str, _Pending] = {}

    def made(self, trig: Trigger, lookups: list[Lookup], refusals: list[Refusal]) -> None:
        """The lookups after one call, and the refusals noted with them."""
        now = time.time_ns()
        timed_out = {r.lookup_call_id for r in refusals if r.reason == "lookup_timeout"}
        for i, lookup in enumerate(lookups):  # lookups run one at a time, so the i-th timing is the i-th lookup's
            measured = i < len(trig.times)
            start, end = trig.times[i] if measured else (now, now)
            end = end or now  # a lookup abandoned at its timeout ends, for stretto, now
            outcome = outcome_of(lookup, lookup.call_id in timed_out)
            if outcome is None:
                self.pending[lookup.call_id] = _Pending(trig, lookup, start, end, measured)
            else:
                self._emit(trig, lookup.tool, lookup, outcome, start, end, decided_by="at_once", measured=measured)
        for refusal in refusals:
            if refusal.lookup_call_id is None:  # a lookup the flow chose, never made: no call to time
                outcome = "cut" if refusal.reason in _CUT_REASONS else "refused"
                self._emit(trig, refusal.tool, None, outcome, now, now, refusal.reason, decided_by="at_once")

    def repeated(self, lookup_call_id: str | None) -> None:
        """The agent made a lookup's call again: it was a detour."""
        pending = self.pending.pop(lookup_call_id or "", None)
        if pending is not None:
            self._emit(pending.trigger, pending.lookup.tool, pending.lookup, "detour", pending.start_ns,
                       pending.end_ns, decided_by="repeat", measured=pending.measured)

    def settled(self, by: str = "write") -> None:
        """A write (`by="write"`) or the session's end (`"session_end"`): every returned lookup not
        asked for again was used."""
        pending, self.pending = self.pending, {}
        for p in pending.values():
            self._emit(p.trigger, p.lookup.tool, p.lookup, "used", p.start_ns, p.end_ns, decided_by=by,
                       measured=p.measured)

    def _emit(self, trig: Trigger, tool: str, lookup: Lookup | None, outcome: str, start: int, end: int,
              reason: str | None = None, *, decided_by: str, measured: bool = True) -> None:
        attributes: dict[str, Any] = {OPERATION: "execute_tool", TOOL_NAME: tool, "gen_ai.tool.type": "function",
                                      TRIGGER_CALL_ID: trig.call_id, TRIGGER_TOOL: trig.tool, OUTCOME: outcome,
                                      SESSION_ID: self.session_id, DECIDED_BY: decided_by}
        if not measured:
            attributes[TIMING] = "unmeasured"
        if lookup is not None:
            attributes[CALL_ID] = lookup.call_id
            if lookup.site is not None:
                attributes[SITE] = lookup.site
            if lookup.score is not None:
                attributes[SCORE] = float(lookup.score)
        if reason is not None:
            attributes[REFUSAL_REASON] = reason
        log.debug("stretto: lookup %s after %s (%s): %s%s", tool, trig.tool, trig.call_id, outcome,
                  "" if lookup is None or lookup.score is None else f", score {lookup.score:.3f}")
        name = f"{SPAN_PREFIX} {tool}"
        try:
            _otel_span(trig, name, attributes, outcome, start, end)
        except Exception as exc:  # noqa: BLE001 - tracing never breaks the agent's call
            log.debug("stretto: could not write the span of a lookup: %s", exc)
        if self.native is not None:
            try:
                self.native.emit(trig.native, name, attributes, start, end)
            except Exception as exc:  # noqa: BLE001
                log.debug("stretto: could not write the SDK's span of a lookup: %s", exc)


def _otel_span(trig: Trigger, name: str, attributes: dict[str, Any], outcome: str, start: int, end: int) -> None:
    api = otel()
    if api is None:
        return
    _context, metrics, _propagate, trace = api
    tracer = trace.get_tracer("stretto")
    span = tracer.start_span(name, context=trig.context, kind=trace.SpanKind.INTERNAL, attributes=attributes,
                             start_time=start)
    if outcome in ("failed", "cut"):
        span.set_attribute("error.type", "timeout" if outcome == "cut" else "tool_error")
        span.set_status(trace.Status(trace.StatusCode.ERROR))
    span.end(end_time=max(end, start))
    _lookup_counter(metrics).add(1, {OUTCOME: outcome, TOOL_NAME: attributes[TOOL_NAME]})


_COUNTERS: dict[int, Any] = {}
"""The lookups' counter, made once per metrics API: before a meter provider is set, OpenTelemetry
keeps every proxy meter and counter made (to point them at the provider later), so one made per
lookup grew a served process's memory with every lookup (five of each per τ² session)."""


def _lookup_counter(metrics: Any) -> Any:
    got = _COUNTERS.get(id(metrics))
    if got is None:
        got = _COUNTERS[id(metrics)] = metrics.get_meter("stretto").create_counter(
            COUNTER, unit="{lookup}", description="stretto's lookups, by outcome")
    return got
