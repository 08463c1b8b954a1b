"""A tool result is untrusted text: however it nests, aliases or types its values, reading it is
bounded work, raises nothing into the caller, and gives values a tool call can carry."""

from __future__ import annotations

import json
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any, Callable

import pytest

from shop_sessions import MANIFEST, shop_flow
from stretto_core.serve.engine import Engine, EngineConfig, appendix
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.model import (LLMTurn, Lookup, Session, SessionHeader, ToolCall, ToolResult,
                                         UserMessage, parse_json_content)
from stretto_core.sessions.store import ReadReport, read_session, write_session
from stretto_core.sessions.values import index_result, leaves_addressed, parse_result
from stretto_core.flow.ir import learn

WORK_BUDGET = 50_000
"""Python calls one result may cost to read; a result that needs more was read without bounds."""


class TooMuchWork(BaseException):
    """Raised from the profiler once the budget is spent (a BaseException, so nothing catches it)."""


def calls_made(fn: Callable[..., Any], *args: Any, budget: int = WORK_BUDGET) -> int:
    """How many Python calls `fn(*args)` makes; TooMuchWork past `budget` (so a stall fails fast)."""
    made = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal made
        if event == "call":
            made += 1
            if made > budget:
                raise TooMuchWork(f"more than {budget} calls")

    sys.setprofile(count)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return made


def alias_bomb(levels: int, width: int = 9) -> str:
    """Nested YAML aliases of empty lists: a few hundred bytes that stand for width**levels lists."""
    lines = [f"a0: &a0 [{', '.join(['[]'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def deep_json(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def deep_list(depth: int) -> str:
    return "[" * depth + "]" * depth


def served_session(content: str) -> Any:
    """An engine session that took in one result with this content, and made lookups after it."""
    es = Engine(FlowRuntime(shop_flow()), EngineConfig(theta=0.0)).session(live_manifest=MANIFEST)
    es.observe(UserMessage(text="I am ann@example.com"))
    es.observe(LLMTurn(calls=[ToolCall(call_id="c1", tool="get_user_details", arguments={"user_id": "u1"})]))
    es.observe(ToolResult(call_id="c1", tool="get_user_details", content=content,
                          parsed=parse_json_content(content)))
    return es


def test_a_333_byte_yaml_alias_bomb_is_read_in_bounded_work() -> None:
    bomb = alias_bomb(7)
    assert len(bomb.encode()) < 400
    calls_made(index_result, bomb)


def test_observing_an_alias_bomb_is_bounded_work_and_raises_nothing() -> None:
    calls_made(served_session, alias_bomb(7), budget=400_000)


def test_an_alias_bomb_of_values_is_cut_at_the_value_budget() -> None:
    bomb = "v: &v [a, b, c]\n" + alias_bomb(6).replace("[]", "*v")
    assert len(leaves_addressed(parse_result(bomb))) <= 5000


@pytest.mark.parametrize("text", [deep_json(600), deep_list(600), deep_json(5000), deep_list(100_000)],
                         ids=["object-600", "list-600", "object-5000", "list-100000"])
def test_a_deeply_nested_result_raises_nothing_and_is_not_parsed_past_the_depth_limit(text: str) -> None:
    assert parse_json_content(text) is None
    index_result(text)  # no RecursionError
    es = served_session(text)
    assert not getattr(es, "broken", False), "the engine read it within its bounds, not by giving up"


def test_learning_from_a_session_with_a_deep_result_raises_nothing() -> None:
    session = Session(header=SessionHeader(session_id="deep", harness="test", manifest=MANIFEST), events=[
        UserMessage(text="hi"),
        LLMTurn(calls=[ToolCall(call_id="c1", tool="get_user_details", arguments={"user_id": "u1"})]),
        ToolResult(call_id="c1", tool="get_user_details", content=deep_json(600)),
        LLMTurn(calls=[ToolCall(call_id="c2", tool="get_order_details", arguments={"order_id": "#1"})]),
        ToolResult(call_id="c2", tool="get_order_details", content=deep_list(900)),
        LLMTurn(text="done")])
    assert learn([session]).counts.groups


def test_a_session_line_nested_a_thousand_deep_is_a_skipped_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"stretto_session": 1, "session_id": "s", "harness": "t"}) + "\n"
                    + '{"kind": "user", "text": "hi"}\n'
                    + '{"kind": "tool_result", "call_id": "c", "tool": "t", "parsed": ' + deep_list(1000) + "}\n"
                    + '{"kind": "tool_result", "call_id": "c", "tool": "t", "parsed": ' + deep_list(300) + "}\n")
    report = ReadReport(str(path))
    session = read_session(path, report)
    assert [e.kind for e in session.events] == ["user"]
    assert [line for line, _ in report.skipped] == [3, 4]


def test_an_agentdojo_run_with_a_deep_result_is_ingested_and_leaves_no_temp_file(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "gpt-x" / "travel" / "user_task_0.json"
    run.parent.mkdir(parents=True)
    run.write_text(json.dumps({"suite_name": "travel", "user_task_id": "user_task_0", "messages": [
        {"role": "user", "content": "find me a hotel"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": "get_all_hotels_in_city",
                                                            "args": {"city": "Paris"}, "id": "c1"}]},
        {"role": "tool", "content": deep_json(600), "tool_call_id": "c1"},
        {"role": "assistant", "content": "done"}]}))
    out = tmp_path / "out"
    report = ingest_files("agentdojo", [tmp_path / "runs"], out)
    assert report.sessions_written == 1
    assert sorted(p.suffix for p in out.iterdir()) == [".jsonl"]
    result = next(e for e in read_session(next(out.iterdir())).events if isinstance(e, ToolResult))
    assert result.content == deep_json(600) and result.parsed is None


def test_an_agentdojo_call_with_deep_arguments_is_skipped_and_reported(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "gpt-x" / "travel" / "user_task_0.json"
    run.parent.mkdir(parents=True)
    run.write_text(json.dumps({"suite_name": "travel", "user_task_id": "user_task_0", "messages": [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": "f", "args": json.loads(deep_json(300))}]}]}))
    out = tmp_path / "out"
    report = ingest_files("agentdojo", [tmp_path / "runs"], out)
    assert report.sessions_written == 0 and report.skipped
    assert "deeper" in report.skipped[0].message
    assert not out.exists() or list(out.iterdir()) == []


def test_writing_a_session_that_json_cannot_hold_leaves_no_temp_file(tmp_path: Path) -> None:
    deep = json.loads(deep_list(300))
    session = Session(header=SessionHeader(session_id="s", harness="t"),
                      events=[ToolResult(call_id="c", tool="t", parsed=deep)])
    with pytest.raises(Exception, match="cannot be written"):
        write_session(session, tmp_path)
    assert list(tmp_path.iterdir()) == []


YAML_TIMES = "order: W1\nplaced: 2024-05-01\nshipped: 2024-05-03 10:00:00\nsize: 3\nok: true\n"


def test_yaml_dates_and_times_are_indexed_as_text() -> None:
    values = {path: value for path, _, value in leaves_addressed(parse_result(YAML_TIMES))}
    assert values["$.placed"] == "2024-05-01" and values["$.shipped"] == "2024-05-03 10:00:00"
    assert values["$.size"] == 3 and values["$.ok"] is True
    assert all(type(v) in (str, int, float, bool) for v in values.values())


def test_an_appendix_of_lookups_with_dates_in_their_arguments_is_written() -> None:
    lookup = Lookup(call_id="stretto-1", tool="get_order", arguments={"on": date(2024, 5, 1),
                                                                      "at": datetime(2024, 5, 1, 10)},
                    content="{}")
    assert "2024-05-01" in appendix([lookup])
    es = Engine(FlowRuntime(shop_flow()), EngineConfig()).session(live_manifest=MANIFEST)
    assert "2024-05-01" in es.appendix([lookup])


def test_every_verb_reads_sessions_with_a_deep_result_without_a_traceback(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    from shop_sessions import shop_sessions
    from stretto_core.cli import main
    from stretto_core.flow.ir import save_flow

    folder = tmp_path / "sessions"
    for n, session in enumerate(shop_sessions(24)):
        for event in session.events:
            if isinstance(event, ToolResult) and event.tool == "get_order_details" and n % 3 == 0:
                event.content, event.parsed = deep_json(600), None
        write_session(session, folder)
    flow = tmp_path / "f.flow.json"
    save_flow(learn(shop_sessions(20), MANIFEST), flow)
    for argv in (["learn", str(folder), "--split", "all", "--out", str(tmp_path / "l.flow.json")],
                 ["ceiling", str(folder)],
                 ["replay", "--flow", str(flow), "--sessions", str(folder), "--json", str(tmp_path / "r.json")],
                 ["sweep", "--flow", str(flow), "--sessions", str(folder), "--thetas", "0.3"],
                 ["calibrate", "--flow", str(flow), "--sessions", str(folder), "--draws", "20"]):
        assert main(argv) == 0, (argv[0], capsys.readouterr().err[-300:])
