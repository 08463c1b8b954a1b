"""OpenTelemetry GenAI traces into sessions: inference spans are LLM turns, tool spans calls and results.

The names read here are pinned to the OpenTelemetry GenAI semantic conventions (the
`semantic-conventions-genai` repository, status Development; the names as of its `gen-ai-spans`,
`execute-tool` and `gen-ai-events` documents in 2026, the same names Google ADK 2.13 and `mcp` 2.3
emit). They may move while the conventions are in Development; `docs/ingest.md` lists them.

    session        the spans sharing `gen_ai.conversation.id` (else one trace)
    LLM turn       an inference span (`gen_ai.operation.name` chat | generate_content |
                   text_completion): text and tool calls from `gen_ai.output.messages` (opt-in),
                   usage from `gen_ai.usage.input_tokens`, `.output_tokens`,
                   `.cache_read.input_tokens`, `.cache_creation.input_tokens`
    call, result   an `execute_tool {name}` span: `gen_ai.tool.name`, `gen_ai.tool.call.id`,
                   `gen_ai.tool.call.arguments` and `.result` (both opt-in), failed when the span's
                   status is ERROR or it has `error.type`; it belongs to the turn whose output
                   named its call id, else to the latest inference span started before it
    user message   a user-role text message of `gen_ai.input.messages` (opt-in) that no earlier
                   inference span of the session had, before the turn it first appears in

Without inference spans (an MCP server's own spans), each set of overlapping tool spans is one
inferred turn: calls made together run in parallel. Spans carry no tool kinds: `--manifest`
supplies them. A call whose arguments were not captured keeps `{}`: a flow learns the site but
binds nothing, and the report says so.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from stretto_core.errors import InputError
from stretto_core.sessions.ingest.common import (EpisodeBuilder, FileResult, ManifestSource, attach_manifest,
                                                 file_tag, make_session_id)
from stretto_core.sessions.ingest.otlp import Span, read_spans
from stretto_core.sessions.model import Session, SessionHeader, Usage

from stretto_core.sessions.genai import (  # noqa: E402 - the names, pinned in one place
    AGENT_NAME, ARGUMENTS, CACHE_CREATION, CACHE_READ, CALL_ID, CONVERSATION, ERROR_TYPE, EXECUTE_TOOL,
    INPUT_MESSAGES, INPUT_TOKENS, MODELS, OPERATION, OUTPUT_MESSAGES, OUTPUT_TOKENS, RESULT, TOOL_NAME,
)

INFERENCE = frozenset({"chat", "generate_content", "text_completion"})

MERGED_TOOLS = "(merged tools)"
"""ADK's span around a turn's parallel tool spans: not a call."""

HARNESSES = {"gcp.vertex.agent": "google-adk"}
"""Instrumentation scope -> harness name, where the scope's own name says little."""

NO_ARGUMENTS = ("calls without captured arguments (gen_ai.tool.call.arguments): a flow learns these sites "
                "but binds nothing")
NO_RESULTS = "results without captured content (gen_ai.tool.call.result)"
NO_USER_TEXT = "sessions without user text (gen_ai.input.messages not captured)"


def convert(path: Path, manifests: ManifestSource) -> FileResult:
    """Every conversation of one OTLP/JSON file; a malformed span is an InputError naming it."""
    spans = read_spans(path)
    out = FileResult(path=str(path))
    tag = file_tag(path)
    for key, group in _conversations(spans).items():
        session, notes = _session(path, key, group, tag)
        if session is None:
            continue
        out.sessions.append(session)
        out.notes.update(notes)
    if not out.sessions:
        raise InputError(str(path), "no GenAI spans (no inference or execute_tool span)")
    attach_manifest(out.sessions, manifests.override)
    if manifests.override is None:
        out.notes["sessions without tool kinds (spans carry none): pass --manifest"] += len(out.sessions)
    return out


def _conversations(spans: list[Span]) -> dict[str, list[Span]]:
    conversation_of_trace: dict[str, str] = {}
    for s in spans:
        cid = s.get(CONVERSATION)
        if isinstance(cid, str) and cid and s.trace_id not in conversation_of_trace:
            conversation_of_trace[s.trace_id] = cid
    groups: dict[str, list[Span]] = {}
    for s in spans:
        groups.setdefault(conversation_of_trace.get(s.trace_id, s.trace_id or "trace"), []).append(s)
    return groups


def _is_tool(s: Span) -> bool:
    return (s.get(OPERATION) == EXECUTE_TOOL or s.name.startswith(EXECUTE_TOOL + " ")) and s.get(TOOL_NAME) != MERGED_TOOLS


def _is_inference(s: Span) -> bool:
    return s.get(OPERATION) in INFERENCE


def _messages(path: Path, s: Span, key: str) -> list[dict[str, Any]] | None:
    raw = s.get(key)
    if raw is None:
        return None
    try:
        data = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        raise InputError(str(path), f"span {s.span_id} ({s.name}): {key} is not JSON") from None
    if not isinstance(data, list) or not all(isinstance(m, dict) for m in data):
        raise InputError(str(path), f"span {s.span_id} ({s.name}): {key} is not a list of messages")
    return data


def _parts(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [p for p in message.get("parts") or [] if isinstance(p, dict) and p.get("type") == kind]


@dataclass
class _Turn:
    span: Span | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    """Calls as the output messages named them: id, name, arguments."""
    tools: list[Span] = field(default_factory=list)
    text: str = ""
    users: list[str] = field(default_factory=list)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _session(path: Path, key: str, spans: list[Span], tag: str) -> tuple[Session | None, Counter]:
    notes: Counter = Counter()
    inference = sorted((s for s in spans if _is_inference(s)), key=lambda s: (s.start, s.span_id))
    tools = sorted((s for s in spans if _is_tool(s)), key=lambda s: (s.start, s.span_id))
    if not inference and not tools:
        return None, notes
    turns, responses = _turns(path, inference, tools, notes)
    builder = EpisodeBuilder()
    for turn in turns:
        for text in turn.users:
            builder.user(text)
        by_id = {str(t.get(CALL_ID)): t for t in turn.tools if t.get(CALL_ID) is not None}
        named = turn.calls or [{"id": t.get(CALL_ID), "name": t.get(TOOL_NAME) or t.name[len(EXECUTE_TOOL) + 1:],
                                "arguments": None} for t in turn.tools]
        calls = []
        for c in named:
            span = by_id.get(str(c.get("id")))
            arguments = c.get("arguments")
            if arguments is None and span is not None and span.get(ARGUMENTS) is not None:
                arguments = span.get(ARGUMENTS)
            if arguments is None:
                notes[NO_ARGUMENTS] += 1
                arguments = {}
            calls.append((builder.call(str(c.get("name") or ""), arguments, c.get("id")), span))
        builder.turn(turn.text, [c for c, _ in calls], _usage(turn.span), at=_at(turn.span))
        if turn.span is None:
            builder.events[-1] = builder.events[-1].model_copy(update={"inferred": True})
        for call, span in sorted(calls, key=lambda cs: cs[1].end if cs[1] is not None else 1 << 62):
            _result(builder, call.call_id, call.tool, span, responses, notes)
    if not any(t.users for t in turns):
        notes[NO_USER_TEXT] += 1
    first = inference[0] if inference else tools[0]
    model = next((m for s in inference for m in (s.get(k) for k in MODELS) if isinstance(m, str) and m), None)
    agent_name = next((s.get(AGENT_NAME) for s in spans if isinstance(s.get(AGENT_NAME), str)), None)
    service = first.resource.get("service.name")
    app = agent_name or (service if isinstance(service, str) and not service.startswith("unknown_service") else None)
    header = SessionHeader(session_id=make_session_id("otel", tag, key), harness=HARNESSES.get(first.scope, first.scope or "otel"),
                           agent_model=model, app=app, started_at=_at(first), source=f"{path.name}#{key}",
                           labels={"conversation_id": key})
    return Session(header=header, events=builder.events), notes


def _turns(path: Path, inference: list[Span], tools: list[Span], notes: Counter) -> tuple[list[_Turn], dict[str, Any]]:
    """The LLM turns, each with its calls and tool spans; and every tool response the inputs carried."""
    responses: dict[str, Any] = {}
    if not inference:
        return _overlapping(tools), responses
    turns: list[_Turn] = []
    seen_users = 0
    owner: dict[str, _Turn] = {}
    for s in inference:
        turn = _Turn(span=s)
        inputs = _messages(path, s, INPUT_MESSAGES) or []
        users = [" ".join(str(p.get("content") or "") for p in _parts(m, "text"))
                 for m in inputs if m.get("role") == "user" and _parts(m, "text")]
        turn.users, seen_users = users[seen_users:], max(seen_users, len(users))
        for m in inputs:
            for p in _parts(m, "tool_call_response"):
                responses[str(p.get("id"))] = p.get("response", p.get("result"))
        for m in _messages(path, s, OUTPUT_MESSAGES) or []:
            turn.text = "\n".join(x for x in [turn.text] + [str(p.get("content") or "") for p in _parts(m, "text")] if x)
            for p in _parts(m, "tool_call"):
                turn.calls.append(p)
                owner[str(p.get("id"))] = turn
        turns.append(turn)
    for t in tools:
        turn = owner.get(str(t.get(CALL_ID)))
        if turn is None:
            started = [x for x in turns if x.span is not None and x.span.start <= t.start]
            turn = started[-1] if started else turns[0]
            if turn.calls:
                notes["tool spans whose call no model output named, added to the turn before them"] += 1
                turn.calls.append({"id": t.get(CALL_ID), "name": t.get(TOOL_NAME), "arguments": None})
        turn.tools.append(t)
    return turns, responses


def _overlapping(tools: list[Span]) -> list[_Turn]:
    """Tool spans alone: each run of overlapping spans is one inferred turn (parallel calls)."""
    turns: list[_Turn] = []
    end = -1
    for t in tools:
        if not turns or t.start >= end:
            turns.append(_Turn(span=None))
        turns[-1].tools.append(t)
        end = max(end, t.end)
    return turns


def _result(builder: EpisodeBuilder, call_id: str, tool: str, span: Span | None, responses: dict[str, Any],
            notes: Counter) -> None:
    if span is None:
        if call_id in responses:
            builder.result(call_id, _text(responses[call_id]), tool=tool)
        else:
            notes["calls without an execute_tool span or a response"] += 1
        return
    value = span.get(RESULT)
    if value is None:
        value = responses.get(str(span.get(CALL_ID)))
    if value is None:
        notes[NO_RESULTS] += 1
    error = span.error or span.get(ERROR_TYPE) is not None
    builder.result(span.get(CALL_ID) or call_id, "" if value is None else _text(value), error=error, tool=tool,
                   at=_at(span, end=True))


def _usage(span: Span | None) -> Usage | None:
    if span is None:
        return None
    values = {name: span.get(key) for name, key in (("input_tokens", INPUT_TOKENS), ("output_tokens", OUTPUT_TOKENS),
                                                    ("cache_read_input_tokens", CACHE_READ),
                                                    ("cache_creation_input_tokens", CACHE_CREATION))}
    values = {k: v for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}
    return Usage(**values) if values else None


def _at(span: Span | None, end: bool = False) -> datetime | None:
    if span is None:
        return None
    return datetime.fromtimestamp((span.end if end else span.start) / 1e9, tz=timezone.utc)
