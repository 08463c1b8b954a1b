"""OTLP/JSON trace files read into plain spans, with a one-line error naming file and span.

An OTLP exporter writes an `ExportTraceServiceRequest` as JSON: `resourceSpans[] → scopeSpans[] →
spans[]`, each span with hex `traceId`/`spanId`/`parentSpanId`, a `name`, start and end times in
nanoseconds (decimal strings, as the protobuf JSON mapping writes 64-bit integers), `status.code`
(2 = error) and `attributes` as `[{key, value: {stringValue | intValue | doubleValue | boolValue |
arrayValue | kvlistValue | bytesValue}}]`. A file holds one request, or one per line (a
collector's file exporter). Nothing here knows about GenAI: `otel.py` reads the spans.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stretto_core.errors import InputError
from stretto_core.sessions.ingest.common import read_text

STATUS_ERROR = 2
"""`status.code` of a span that failed (STATUS_CODE_ERROR)."""


@dataclass(frozen=True)
class Span:
    """One span: ids, name, times (ns), whether it failed, its attributes, and its scope's name."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start: int
    end: int
    error: bool
    attributes: dict[str, Any]
    scope: str
    resource: dict[str, Any]

    def get(self, key: str, default: Any = None) -> Any:
        return self.attributes.get(key, default)


def read_spans(path: Path) -> list[Span]:
    """Every span of an OTLP/JSON file (one request, or one per line); InputError when malformed."""
    text = read_text(path)
    requests: list[tuple[int | None, Any]] = []
    try:
        requests.append((None, json.loads(text)))
    except json.JSONDecodeError:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                requests.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(str(path), f"not OTLP/JSON: {exc.msg} (column {exc.colno})", number) from exc
    spans: list[Span] = []
    for line, request in requests:
        spans.extend(_request_spans(path, line, request))
    return spans


def _request_spans(path: Path, line: int | None, request: Any) -> list[Span]:
    if not isinstance(request, dict) or not isinstance(request.get("resourceSpans"), list):
        raise InputError(str(path), "not an OTLP ExportTraceServiceRequest (no `resourceSpans` list)", line)
    out = []
    for r, rs in enumerate(request["resourceSpans"]):
        where = f"resourceSpans[{r}]"
        if not isinstance(rs, dict):
            raise InputError(str(path), f"{where} is not an object", line)
        resource = _attributes(path, line, where, (rs.get("resource") or {}).get("attributes"))
        for s, ss in enumerate(rs.get("scopeSpans") or []):
            at = f"{where}.scopeSpans[{s}]"
            if not isinstance(ss, dict) or not isinstance(ss.get("spans", []), list):
                raise InputError(str(path), f"{at} is not an object with a `spans` list", line)
            scope = str((ss.get("scope") or {}).get("name") or "")
            for n, raw in enumerate(ss.get("spans", [])):
                out.append(_span(path, line, f"{at}.spans[{n}]", raw, scope, resource))
    return out


def _span(path: Path, line: int | None, where: str, raw: Any, scope: str, resource: dict[str, Any]) -> Span:
    if not isinstance(raw, dict):
        raise InputError(str(path), f"{where} is not an object", line)
    span_id = raw.get("spanId")
    name = raw.get("name")
    label = f"span {span_id} ({name})" if isinstance(span_id, str) and span_id else f"{where} ({name})"
    if not isinstance(span_id, str) or not span_id:
        raise InputError(str(path), f"{label}: no `spanId`", line)
    if not isinstance(name, str):
        raise InputError(str(path), f"{label}: no `name`", line)
    start, end = _nanos(raw.get("startTimeUnixNano")), _nanos(raw.get("endTimeUnixNano"))
    if start is None or end is None:
        raise InputError(str(path), f"{label}: `startTimeUnixNano`/`endTimeUnixNano` is not a whole number", line)
    status = raw.get("status") or {}
    code = status.get("code") if isinstance(status, dict) else None
    return Span(trace_id=str(raw.get("traceId") or ""), span_id=span_id, parent_id=str(raw.get("parentSpanId") or ""),
                name=name, start=start, end=end, error=code in (STATUS_ERROR, "STATUS_CODE_ERROR"),
                attributes=_attributes(path, line, label, raw.get("attributes")), scope=scope, resource=resource)


def _nanos(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _attributes(path: Path, line: int | None, label: str, raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise InputError(str(path), f"{label}: `attributes` is not a list", line)
    out: dict[str, Any] = {}
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise InputError(str(path), f"{label}: an attribute without a `key`", line)
        try:
            out[item["key"]] = any_value(item.get("value"))
        except ValueError as exc:
            raise InputError(str(path), f"{label}: attribute {item['key']}: {exc}", line) from None
    return out


def any_value(value: Any) -> Any:
    """An OTLP `AnyValue` as Python: strings, ints (sent as strings), floats, bools, lists, dicts."""
    if value is None or value == {}:
        return None
    if not isinstance(value, dict) or len(value) != 1:
        raise ValueError(f"not an AnyValue: {json.dumps(value)[:80]}")
    (kind, inner), = value.items()
    if kind == "stringValue":
        return str(inner)
    if kind == "intValue":
        if isinstance(inner, bool) or not (isinstance(inner, int) or (isinstance(inner, str) and inner.lstrip("-").isdigit())):
            raise ValueError(f"intValue {inner!r} is not a whole number")
        return int(inner)
    if kind == "doubleValue":
        return float(inner)
    if kind == "boolValue":
        return bool(inner)
    if kind == "arrayValue":
        return [any_value(v) for v in (inner or {}).get("values", [])]
    if kind == "kvlistValue":
        return {kv.get("key"): any_value(kv.get("value")) for kv in (inner or {}).get("values", [])}
    if kind == "bytesValue":
        return str(inner)
    raise ValueError(f"unknown AnyValue kind {kind!r}")
