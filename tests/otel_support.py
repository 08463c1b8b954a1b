"""An in-memory OpenTelemetry exporter and metric reader, installed once per test process as the
global providers (OpenTelemetry lets a process set them once), for the tests of stretto's spans."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the OpenTelemetry SDK is a test dependency (pip install '.[test]')")

from opentelemetry import metrics, trace  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

_INSTALLED: dict[str, Any] = {}


def installed() -> tuple[InMemorySpanExporter, InMemoryMetricReader]:
    """The process's exporter and reader, installed on first use."""
    if not _INSTALLED:
        exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _INSTALLED.update(exporter=exporter, reader=reader)
    return _INSTALLED["exporter"], _INSTALLED["reader"]


@pytest.fixture
def spans() -> InMemorySpanExporter:
    """The in-memory exporter, emptied for this test."""
    exporter, _ = installed()
    exporter.clear()
    return exporter


def lookup_spans(exporter: InMemorySpanExporter) -> list[Any]:
    """stretto's lookup spans among everything exported."""
    return [s for s in exporter.get_finished_spans() if "stretto.outcome" in (s.attributes or {})]


def counted(outcome: str) -> float:
    """The `stretto.lookups` counter's total for one outcome, so far in this process."""
    _, reader = installed()
    data = reader.get_metrics_data()
    total = 0.0
    for resource in (data.resource_metrics if data else []):
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "stretto.lookups":
                    total += sum(p.value for p in metric.data.data_points
                                 if p.attributes.get("stretto.outcome") == outcome)
    return total


def assert_lookup_span(span: Any, tool: str, trigger_call_id: str | None, outcome: str) -> None:
    """One lookup's span, as the GenAI conventions and stretto's attributes name it."""
    a = span.attributes
    assert span.name == f"execute_tool {tool}"
    assert a["gen_ai.operation.name"] == "execute_tool" and a["gen_ai.tool.name"] == tool
    assert a["gen_ai.tool.call.id"].startswith("stretto-")
    if trigger_call_id is not None:
        assert a["stretto.trigger.call_id"] == trigger_call_id
    assert a["stretto.outcome"] == outcome
    assert isinstance(a["stretto.site"], str) and 0.0 < a["stretto.score"] <= 1.0
