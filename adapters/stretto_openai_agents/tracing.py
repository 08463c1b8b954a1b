"""stretto's lookups in the OpenAI Agents SDK's own traces: one `custom_span` per lookup, a child
of the SDK's `function_span` of the agent's call that triggered it (beside the OpenTelemetry span
`stretto_core.serve.telemetry` writes). With the SDK's tracing disabled the SDK makes no-op spans."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).isoformat()


class AgentsSpans:
    """`serve.telemetry.NativeSpans` for the OpenAI Agents SDK."""

    def current(self) -> Any:
        """The SDK's current span (the triggering call's `function_span`), or its trace."""
        from agents.tracing import get_current_span, get_current_trace

        return get_current_span() or get_current_trace()

    def emit(self, parent: Any, name: str, attributes: dict[str, Any], start_ns: int, end_ns: int) -> None:
        """A finished `custom_span` under `parent`, with the lookup's attributes as its data and
        the times it ran (none when the call had no trace: the SDK's tracing is off)."""
        if parent is None:
            return
        from agents.tracing import custom_span

        span = custom_span(name=name, data=dict(attributes), parent=parent)
        span.start()
        if hasattr(span, "_started_at"):  # the SDK stamps "now"; the lookup ran earlier
            span._started_at = _iso(start_ns)
        span.finish()  # the SDK stamps its end now: for a lookup whose outcome came later, that is when it did
