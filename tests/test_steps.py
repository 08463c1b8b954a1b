"""The abstraction of a session into steps (action, outcome, feature)."""

from __future__ import annotations

from typing import Any

from stretto_core.sessions.model import (LLMTurn, Lookup, Session, SessionHeader, ToolCall, ToolResult,
                                  UserMessage)
from stretto_core.learn.steps import (ANSWERED, ENDED, FAILED, NO_FEATURE, OK, REPLY, Step, parse_symbol,
                                reply_step, session_steps, session_symbols, step_of_result)


def _session(*events: Any) -> Session:
    return Session(header=SessionHeader(session_id="s", harness="test"), events=list(events))


def _call(cid: str, tool: str, **args: Any) -> ToolCall:
    return ToolCall(call_id=cid, tool=tool, arguments=args)


def _result(cid: str, tool: str, content: str = "{}", error: bool = False, parsed: Any = None) -> ToolResult:
    return ToolResult(call_id=cid, tool=tool, content=content, error=error, parsed=parsed)


class _StatusMap:
    """A feature map that reads `status` from get_order_details only."""

    def has_fields(self, tool: str) -> bool:
        return tool == "get_order_details"

    def feature_of(self, tool: str, parsed: Any) -> int:
        return {"pending": 1, "delivered": 2}.get(parsed.get("status"), 0) if isinstance(parsed, dict) else 0


def test_each_call_of_a_parallel_turn_is_its_own_step_in_the_order_made():
    s = _session(
        UserMessage(text="hi"),
        LLMTurn(calls=[_call("1", "get_user_details"), _call("2", "get_order_details")]),
        _result("2", "get_order_details"),
        _result("1", "get_user_details"),
    )
    records = session_steps(s)
    assert [r.action for r in records] == ["get_user_details", "get_order_details"]
    assert [r.event_index for r in records] == [1, 1]  # both made in the turn at event 1
    assert [r.call.call_id for r in records] == ["1", "2"]  # type: ignore[union-attr]
    assert records[0].result is s.events[3]


def test_a_call_that_errs_or_has_no_recorded_result_fails():
    s = _session(
        LLMTurn(calls=[_call("1", "get_order_details"), _call("2", "get_user_details")]),
        _result("1", "get_order_details", "Error: no such order", error=True),
    )
    records = session_steps(s)
    assert [r.step for r in records] == [Step("get_order_details", FAILED, 0), Step("get_user_details", FAILED, 0)]
    assert records[1].result is None


def test_a_reply_is_answered_when_the_user_speaks_before_the_next_turn_and_ended_otherwise():
    s = _session(
        UserMessage(text="hi"),
        LLMTurn(text="Which order?"),
        UserMessage(text="#W1"),
        LLMTurn(text="Thinking aloud"),          # no user message before the next turn: ended
        LLMTurn(calls=[_call("1", "get_order_details")]),
        _result("1", "get_order_details"),
        LLMTurn(text="Done."),                   # the session ends on it: ended
    )
    symbols, actions = session_symbols(s)
    assert symbols == ["reply/answered/0", "reply/ended/0", "get_order_details/ok/0", "reply/ended/0"]
    assert actions == [REPLY, REPLY, "get_order_details", REPLY]


def test_the_users_own_calls_and_stretto_lookups_are_not_steps():
    s = _session(
        UserMessage(text="my phone", calls=[_call("u1", "toggle_airplane_mode")]),
        _result("u1", "toggle_airplane_mode"),
        LLMTurn(calls=[_call("1", "get_customer_by_phone")]),
        _result("1", "get_customer_by_phone"),
        Lookup(call_id="stretto-1", tool="get_details_by_id", after_call_id="1"),
        LLMTurn(text="ok"),
    )
    assert [r.action for r in session_steps(s)] == ["get_customer_by_phone", REPLY]


def test_the_feature_comes_from_the_map_and_only_for_calls_that_succeeded():
    s = _session(
        LLMTurn(calls=[_call("1", "get_order_details"), _call("2", "get_order_details"),
                       _call("3", "get_user_details")]),
        _result("1", "get_order_details", '{"status": "pending"}', parsed={"status": "pending"}),
        _result("2", "get_order_details", '{"status": "pending"}', error=True),
        _result("3", "get_user_details", '{"status": "pending"}', parsed={"status": "pending"}),
    )
    symbols, _ = session_symbols(s, _StatusMap())
    assert symbols == ["get_order_details/ok/1", "get_order_details/failed/0", "get_user_details/ok/0"]


def test_a_live_result_abstracts_as_a_recorded_one_parsing_its_text_when_needed():
    # unparsed text is parsed only for a tool the map reads
    assert step_of_result("get_order_details", False, '{"status": "delivered"}', None, _StatusMap()) \
        == Step("get_order_details", OK, 2)
    assert step_of_result("get_order_details", True, "Error", None, _StatusMap()).symbol == "get_order_details/failed/0"
    assert step_of_result("get_user_details", False, "not json", None, _StatusMap()).feature == NO_FEATURE
    assert step_of_result("get_order_details", False, "{}", None, None).feature == NO_FEATURE


def test_a_symbol_parses_back_into_its_step_even_when_the_tool_name_has_a_slash():
    for step in (Step("srv/get_thing", OK, 7), reply_step(True), reply_step(False)):
        assert parse_symbol(step.symbol) == step
    assert reply_step(True).outcome == ANSWERED and reply_step(False).outcome == ENDED
    assert reply_step(True).is_reply and not Step("t", OK).is_reply
