"""A served process makes its lookups' counter once: OpenTelemetry keeps every proxy counter made."""

from __future__ import annotations

import pytest

from stretto_core.serve import telemetry


class CountingMetrics:
    """A metrics API that counts the counters asked of it (as OpenTelemetry's proxies keep them)."""

    def __init__(self) -> None:
        self.made = 0

    def get_meter(self, name: str) -> "CountingMetrics":
        return self

    def create_counter(self, name: str, **_: str) -> object:
        self.made += 1
        return object()


def test_the_lookups_counter_is_made_once_however_many_lookups_are_counted() -> None:
    metrics = CountingMetrics()
    counters = {id(telemetry._lookup_counter(metrics)) for _ in range(1000)}
    assert len(counters) == 1 and metrics.made == 1


def test_spans_of_many_lookups_leave_one_counter_in_the_process() -> None:
    api = telemetry.otel()
    if api is None:
        pytest.skip("opentelemetry-api is not installed")
    metrics = api[1]
    assert telemetry._lookup_counter(metrics) is telemetry._lookup_counter(metrics)
