"""The session model: events told apart by kind, versions refused, typos refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from stretto_core.errors import InputError
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import (LLMTurn, Lookup, Session, SessionHeader, ToolCall, ToolResult, UserMessage,
                                  manifest_hash, parse_event)
from stretto_core.sessions.store import read_header, read_session


def test_an_event_line_becomes_the_model_its_kind_names() -> None:
    assert isinstance(parse_event({"kind": "user", "text": "hi"}), UserMessage)
    assert isinstance(parse_event({"kind": "llm_turn"}), LLMTurn)
    assert isinstance(parse_event({"kind": "tool_result", "call_id": "c", "tool": "t"}), ToolResult)
    assert isinstance(parse_event({"kind": "lookup", "call_id": "s", "tool": "t"}), Lookup)


def test_an_unknown_kind_or_an_unknown_field_is_refused() -> None:
    with pytest.raises(ValidationError):
        parse_event({"kind": "thought", "text": "hmm"})
    with pytest.raises(ValidationError):
        parse_event({"kind": "user", "txet": "typo"})


def test_a_session_file_of_another_version_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "future.jsonl"
    path.write_text('{"stretto_session": 4, "session_id": "s", "harness": "h"}\n')
    with pytest.raises(InputError, match=r"future\.jsonl:1: stretto_session 4 is not version 1, 2 or 3"):
        read_session(path)
    with pytest.raises(InputError, match="is not version 1, 2 or 3"):
        read_header(path)


def test_a_session_answers_its_calls_and_results() -> None:
    call = ToolCall(call_id="c1", tool="get_order", arguments={"id": 1})
    session = Session(header=SessionHeader(session_id="s", harness="h"), events=[
        UserMessage(text="hi"), LLMTurn(calls=[call]),
        ToolResult(call_id="c1", tool="get_order", content="{}"), LLMTurn(text="done"),
    ])
    assert session.agent_calls() == [call]
    assert len(session.llm_turns()) == 2
    assert set(session.results_by_call()) == {"c1"}


def test_the_manifest_hash_is_stable_and_changes_with_the_manifest() -> None:
    a = ToolManifest.declare("shop", reads=["get_order"], writes=["refund"])
    b = ToolManifest.declare("shop", reads=["get_order", "get_user"], writes=["refund"])
    assert manifest_hash(a) == manifest_hash(a.model_copy(deep=True))
    assert manifest_hash(a) != manifest_hash(b)
