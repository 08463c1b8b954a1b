"""OpenTelemetry GenAI traces: a real ADK run's spans ingest into the session that run saw."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from stretto_core.cli import app
from stretto_core.flow.ir import learn
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.ingest.otel import ARGUMENTS, INPUT_MESSAGES, NO_ARGUMENTS, OUTPUT_MESSAGES
from stretto_core.sessions.manifest import ToolManifest, save_manifest
from stretto_core.sessions.model import LLMTurn, ToolResult, UserMessage
from stretto_core.sessions.store import load_sessions

FIXTURE = Path(__file__).parent / "fixtures" / "otel"
SPANS = FIXTURE / "adk_shop.otlp.json"
SEEN = FIXTURE / "adk_shop.transcript.jsonl"
MANIFEST = ToolManifest.declare("shop", reads=["get_order", "get_customer"], writes=["refund_order"])


def _ingest(path: Path, out: Path, manifest=None):
    report = ingest_files("otel", [path], out, manifest=manifest)
    return report, (load_sessions([out]) if out.is_dir() else [])


def _events(session) -> list[tuple]:
    """The session's events as the run saw them: kinds, texts, calls, results (parsed), usage."""
    out = []
    for e in session.events:
        if isinstance(e, UserMessage):
            out.append(("user", e.text))
        elif isinstance(e, LLMTurn):
            calls = [(c.call_id, c.tool, c.arguments) for c in e.calls]
            out.append(("turn", e.text, calls, e.usage.input_tokens, e.usage.output_tokens,
                        e.usage.cache_read_input_tokens or 0))
        elif isinstance(e, ToolResult):
            out.append(("result", e.tool, json.loads(e.content), e.error))
    return out


def _transcript() -> list[tuple]:
    out = []
    for line in SEEN.read_text().splitlines():
        e = json.loads(line)
        if "user" in e:
            out.append(("user", e["user"]))
        elif "turn" in e:
            t = e["turn"]
            out.append(("turn", t["text"], [(c["call_id"], c["tool"], c["arguments"]) for c in t["calls"]],
                        t["usage"]["input_tokens"], t["usage"]["output_tokens"], t["usage"]["cached_tokens"]))
        else:
            out.append(("result", e["result"]["tool"], e["result"]["result"], False))
    return out


def _edited(tmp_path: Path, edit) -> Path:
    data = json.loads(SPANS.read_text())
    for span in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        edit(span)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return path


def test_the_adk_runs_spans_ingest_into_the_session_its_own_transcript_describes_event_for_event(tmp_path) -> None:
    report, [session] = _ingest(SPANS, tmp_path)
    assert report.sessions_written == 1 and not report.skipped
    assert _events(session) == _transcript()
    assert session.header.harness == "google-adk" and session.header.agent_model == "scripted-shop-1"


def test_the_calls_one_model_turn_made_together_stay_one_turn_of_parallel_calls(tmp_path) -> None:
    _, [session] = _ingest(SPANS, tmp_path)
    turns = [len(t.calls) for t in session.llm_turns()]
    assert turns == [1, 2, 0, 1, 0]


def test_one_request_per_line_reads_as_the_same_session(tmp_path) -> None:
    data = json.loads(SPANS.read_text())
    lines = tmp_path / "lines.json"
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    lines.write_text("\n".join(json.dumps({"resourceSpans": [{**data["resourceSpans"][0],
                                                              "scopeSpans": [{**data["resourceSpans"][0]["scopeSpans"][0],
                                                                              "spans": [s]}]}]}) for s in spans) + "\n")
    _, [session] = _ingest(lines, tmp_path / "out")
    assert _events(session) == _transcript()


def test_a_manifest_gives_the_spans_tools_their_kinds_and_a_flow_binds_from_them(tmp_path) -> None:
    save_manifest(MANIFEST, tmp_path / "shop.json")
    _, [session] = _ingest(SPANS, tmp_path / "out", manifest=tmp_path / "shop.json")
    assert session.header.manifest.is_read("get_customer") and not session.header.manifest.is_read("refund_order")
    twice = session.model_copy(update={"header": session.header.model_copy(update={"session_id": "again"})})
    flow = learn([session, twice])
    assert flow.table.lookups["get_customer"].kind == "bound"
    assert flow.table.lookups["get_customer"].args["customer_id"].sources == ["get_order $.customer_id"]


def test_without_captured_arguments_the_calls_keep_none_and_the_report_says_a_flow_binds_nothing(tmp_path) -> None:
    def strip(span):
        span["attributes"] = [a for a in span["attributes"] if a["key"] not in (ARGUMENTS, OUTPUT_MESSAGES)]
    report, [session] = _ingest(_edited(tmp_path, strip), tmp_path / "out", manifest=MANIFEST)
    assert report.notes[NO_ARGUMENTS] == 4
    assert all(c.arguments == {} for c in session.agent_calls())
    assert learn([session]).table.lookups["get_customer"].kind == "bare"  # a site, and nothing to bind


def test_tool_spans_alone_make_one_inferred_turn_per_set_of_overlapping_calls(tmp_path) -> None:
    def tools_only(span):
        keep = any(a["key"] == "gen_ai.operation.name" and a["value"]["stringValue"] == "execute_tool"
                   for a in span["attributes"])
        if not keep:
            span["attributes"] = [a for a in span["attributes"] if a["key"] != "gen_ai.operation.name"]
            span["name"] = "work"
    _, [session] = _ingest(_edited(tmp_path, tools_only), tmp_path / "out")
    turns = session.llm_turns()
    assert all(t.inferred for t in turns)
    assert sum(len(t.calls) for t in turns) == 4 and len(turns) <= 4


def test_a_malformed_span_is_one_line_naming_the_file_and_the_span(tmp_path) -> None:
    def break_one(span):
        if span["name"] == "execute_tool get_customer":
            span["startTimeUnixNano"] = "soon"
    bad = _edited(tmp_path, break_one)
    report, _ = _ingest(bad, tmp_path / "out")
    [skipped] = report.skipped
    assert str(bad) in skipped.message and "span " in skipped.message and "(execute_tool get_customer)" in skipped.message
    assert "\n" not in skipped.message
    result = CliRunner().invoke(app, ["ingest", "otel", str(bad), "--out", str(tmp_path / "cli")])
    assert result.exit_code == 1 and "execute_tool get_customer" in result.output


def test_a_file_that_is_not_otlp_says_so(tmp_path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"spans": []}')
    report, _ = _ingest(path, tmp_path / "out")
    assert "not an OTLP ExportTraceServiceRequest" in report.skipped[0].message
