"""A lookup's span tells the truth about time: its start and end are the lookup's own call (never
the moment the span is written), and `stretto.outcome.decided_by` says when its outcome was known:
at once (failed, cut, refused), at a repeat (detour), at the next write or the session's end (used)."""

from __future__ import annotations

from stretto_core.serve.telemetry import DECIDED_BY, TIMING, SessionSpans, Trigger
from stretto_core.sessions.model import Lookup, Refusal

from otel_support import lookup_spans, spans  # noqa: F401 - a fixture


def lookup(call_id: str, error: bool = False) -> Lookup:
    return Lookup(call_id=call_id, tool="get_customer", arguments={"customer_id": "C1"}, content="{}",
                  error=error, site="get_order", score=0.8)


def test_a_used_lookup_keeps_its_calls_times_though_it_is_written_at_the_next_write(spans) -> None:
    session = SessionSpans("s1")
    trig = Trigger("call-1", "get_order", times=[[1_000, 2_000], [3_000, 5_000]])
    session.made(trig, [lookup("stretto-1"), lookup("stretto-2")], [])
    assert lookup_spans(spans) == []  # a returned lookup's outcome is not known yet
    session.repeated("stretto-2")
    session.settled("write")
    by_id = {s.attributes["gen_ai.tool.call.id"]: s for s in lookup_spans(spans)}
    used, detour = by_id["stretto-1"], by_id["stretto-2"]
    assert (used.start_time, used.end_time, used.attributes["stretto.outcome"]) == (1_000, 2_000, "used")
    assert (detour.start_time, detour.end_time, detour.attributes["stretto.outcome"]) == (3_000, 5_000, "detour")
    assert used.attributes[DECIDED_BY] == "write" and detour.attributes[DECIDED_BY] == "repeat"
    assert TIMING not in used.attributes


def test_the_sessions_end_settles_what_waits_and_says_so(spans) -> None:
    session = SessionSpans("s1")
    session.made(Trigger("call-1", "get_order", times=[[10, 20]]), [lookup("stretto-1")], [])
    session.settled("session_end")
    (span,) = lookup_spans(spans)
    assert span.attributes[DECIDED_BY] == "session_end" and (span.start_time, span.end_time) == (10, 20)


def test_failed_and_refused_lookups_are_written_at_once(spans) -> None:
    session = SessionSpans("s1")
    refused = Refusal(tool="delete_account", reason="marked_write")
    session.made(Trigger("call-1", "get_order", times=[[10, 20]]), [lookup("stretto-1", error=True)], [refused])
    outcomes = {(s.attributes["stretto.outcome"], s.attributes[DECIDED_BY]) for s in lookup_spans(spans)}
    assert outcomes == {("failed", "at_once"), ("refused", "at_once")}


def test_a_lookup_with_no_timing_says_so_rather_than_making_one_up(spans) -> None:
    session = SessionSpans("s1")
    session.made(Trigger("call-1", "get_order"), [lookup("stretto-1")], [])
    session.settled()
    (span,) = lookup_spans(spans)
    assert span.attributes[TIMING] == "unmeasured" and span.attributes[DECIDED_BY] == "write"


def test_the_privacy_page_explains_every_decided_by_value_and_the_timing_attribute() -> None:
    from pathlib import Path

    from stretto_core.serve.telemetry import DECIDED

    page = (Path(__file__).resolve().parent.parent / "docs" / "privacy.md").read_text()
    section = page[page.index("### When a span is written"):]
    assert all(f"| `{value}` |" in section for value in DECIDED) and DECIDED_BY in section and TIMING in section
