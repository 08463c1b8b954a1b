"""What decides each LLM turn: replies, writes, reads, and the reads in the read-only ceiling."""

from __future__ import annotations

from typing import Any

from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Lookup, Session, SessionHeader, ToolCall, ToolResult, UserMessage
from stretto_core.sessions.turns import TurnClass, classify_turns

MANIFEST = ToolManifest.declare("shop", reads=["find_user", "get_user", "get_order", "list_items"],
                                writes=["cancel_order"], generic=["think"])


class Script:
    """A session written line by line: the user speaks, the agent calls, tools answer."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self._n = 0

    def user(self, text: str, *calls: tuple[str, dict[str, Any]]) -> "Script":
        self.events.append(UserMessage(text=text, calls=[self._call(t, a) for t, a in calls]))
        return self

    def agent(self, *calls: tuple[str, dict[str, Any]], text: str = "") -> "Script":
        self.events.append(LLMTurn(text=text, calls=[self._call(t, a) for t, a in calls]))
        return self

    def result(self, content: str, tool: str = "", error: bool = False) -> "Script":
        pending = [c for e in self.events if isinstance(e, (LLMTurn, UserMessage)) for c in e.calls]
        answered = {e.call_id for e in self.events if isinstance(e, ToolResult)}
        call = next(c for c in pending if c.call_id not in answered)
        self.events.append(ToolResult(call_id=call.call_id, tool=tool or call.tool, content=content, error=error))
        return self

    def lookup(self, tool: str, arguments: dict[str, Any], content: str) -> "Script":
        self._n += 1
        self.events.append(Lookup(call_id=f"look{self._n}", tool=tool, arguments=arguments, content=content))
        return self

    def session(self) -> Session:
        return Session(header=SessionHeader(session_id="s", harness="test", app="shop"), events=self.events)

    def classes(self) -> list[TurnClass]:
        return classify_turns(self.session(), MANIFEST)

    def _call(self, tool: str, arguments: dict[str, Any]) -> ToolCall:
        self._n += 1
        return ToolCall(call_id=f"c{self._n}", tool=tool, arguments=arguments)


R, W, READ, C = TurnClass.reply, TurnClass.write, TurnClass.read, TurnClass.ceiling


def test_a_turn_with_no_calls_is_a_reply() -> None:
    assert Script().user("hi").agent(text="How can I help?").classes() == [R]


def test_a_turn_with_any_write_is_a_write_even_beside_reads() -> None:
    script = Script().user("cancel W1").agent(("get_order", {"id": "W1"}), ("cancel_order", {"id": "W1"}))
    assert script.result("{}").result("{}").classes() == [W]


def test_a_tool_the_manifest_does_not_mark_read_counts_as_a_write() -> None:
    assert Script().user("hi").agent(("think", {})).result("ok").classes() == [W]


def test_a_read_before_any_tool_result_is_a_read_not_in_the_ceiling() -> None:
    assert Script().user("I am ann@x.com").agent(("find_user", {"email": "ann@x.com"})).result('"u1"').classes() == [READ]


def test_a_read_whose_argument_came_from_an_earlier_result_is_in_the_ceiling() -> None:
    script = (Script().user("I am ann@x.com").agent(("find_user", {"email": "ann@x.com"})).result('"u1"')
              .agent(("get_user", {"user_id": "u1"})).result('{"orders": ["W1", "W2"]}'))
    assert script.classes() == [READ, C]


def test_a_read_whose_argument_only_the_user_wrote_stays_with_the_model() -> None:
    script = (Script().user("I am ann@x.com").agent(("find_user", {"email": "ann@x.com"})).result('"u1"')
              .user("and order W9").agent(("get_order", {"id": "W9"})).result("{}"))
    assert script.classes() == [READ, READ]


def test_parallel_reads_are_in_the_ceiling_only_when_every_argument_sits_in_a_result() -> None:
    base = Script().user("hi").agent(("get_user", {"user_id": "u1"})).result('{"orders": ["W1", "W2"]}')
    both = base.agent(("get_order", {"id": "W1"}), ("get_order", {"id": "W2"})).result("{}").result("{}")
    assert both.classes() == [READ, C]
    one_unknown = (Script().user("hi").agent(("get_user", {"user_id": "u1"})).result('{"orders": ["W1"]}')
                   .agent(("get_order", {"id": "W1"}), ("get_order", {"id": "W7"})))
    assert one_unknown.classes() == [READ, READ]


def test_a_read_with_no_arguments_after_a_result_is_in_the_ceiling() -> None:
    script = Script().user("hi").agent(("get_user", {"user_id": "u1"})).result("{}").agent(("list_items", {}))
    assert script.classes() == [READ, C]


def test_values_are_matched_case_insensitively_and_numbers_without_a_trailing_zero() -> None:
    script = (Script().user("hi").agent(("get_user", {"user_id": "u1"})).result('{"order": "W1", "n": 3.0}')
              .agent(("get_order", {"id": "w1", "n": 3})))
    assert script.classes() == [READ, C]


def test_a_write_resets_what_later_reads_can_take_from_results_before_it() -> None:
    script = (Script().user("hi").agent(("get_user", {"user_id": "u1"})).result('{"orders": ["W1", "W2"]}')
              .agent(("cancel_order", {"id": "W1"})).result('{"status": "cancelled"}')
              .agent(("get_order", {"id": "W2"})))
    assert script.classes() == [READ, W, READ]


def test_the_result_of_a_write_itself_counts_as_after_the_write() -> None:
    script = (Script().user("hi").agent(("get_user", {"user_id": "u1"})).result("{}")
              .agent(("cancel_order", {"id": "W1"})).result('{"refund_id": "R5"}')
              .agent(("get_order", {"id": "R5"})))
    assert script.classes() == [READ, W, C]


def test_a_write_by_someone_else_does_not_end_a_reads_reach() -> None:
    script = (Script().user("hi").agent(("get_user", {"user_id": "u1"})).result('{"orders": ["W1"]}')
              .user("I cancelled it on my side", ("cancel_order", {"id": "W1"}))
              .agent(("get_order", {"id": "W1"})))
    assert script.classes() == [READ, C]


def test_what_the_users_own_calls_returned_is_not_the_agents_tool_state() -> None:
    script = (Script().user("hi").agent(("get_user", {"user_id": "u1"})).result("{}")
              .user("my phone says", ("get_order", {"id": "W1"})).result('{"item": "lamp-7"}')
              .agent(("list_items", {"sku": "lamp-7"})))
    assert script.classes() == [READ, READ]


def test_a_result_of_the_users_own_call_is_not_a_tool_response_a_speculator_could_act_after() -> None:
    script = (Script().user("hi", ("get_order", {"id": "W1"})).result('{"item": "lamp-7"}')
              .agent(("list_items", {})))
    assert script.classes() == [READ]


def test_what_stretto_looked_up_is_not_the_agents_own_tool_state() -> None:
    script = (Script().user("hi").agent(("get_user", {"user_id": "u1"})).result("{}")
              .lookup("get_order", {"id": "W1"}, '{"item": "lamp-7"}')
              .agent(("list_items", {"sku": "lamp-7"})))
    assert script.classes() == [READ, READ]


def test_a_value_in_a_python_literal_result_is_found() -> None:
    script = (Script().user("hi").agent(("get_user", {"user_id": "u1"})).result("{'Good Night': 'Rating: 5.0'}")
              .agent(("get_order", {"id": "Good Night"})))
    assert script.classes() == [READ, C]


def test_a_value_on_a_line_of_a_text_result_is_found() -> None:
    script = (Script().user("hi").agent(("get_user", {"user_id": "u1"}))
              .result("Hotel Names: Le Marais Boutique\nGood Night\nLuxury Palace")
              .agent(("get_order", {"names": ["Le Marais Boutique", "Luxury Palace"]})))
    assert script.classes() == [READ, C]


def test_a_value_inside_a_pipelines_delimiters_is_found() -> None:
    script = (Script().user("hi").agent(("get_user", {"user_id": "u1"})).result("<<- general\n- External_0>>")
              .agent(("get_order", {"id": "External_0"})))
    assert script.classes() == [READ, C]


def test_with_the_users_words_a_value_the_user_wrote_may_be_an_argument() -> None:
    script = (Script().user("I am ann@x.com").agent(("find_user", {"email": "ann@x.com"})).result('"u1"')
              .user("and my order is W9123").agent(("get_order", {"id": "w9123", "user": "u1"})).result("{}"))
    session = script.session()
    assert classify_turns(session, MANIFEST) == [READ, READ]
    assert classify_turns(session, MANIFEST, user_words=True) == [READ, C]


def test_with_the_users_words_a_value_of_two_characters_is_not_taken_from_them() -> None:
    script = (Script().user("hi, order 7 please").agent(("get_user", {"user_id": "u1"})).result("{}")
              .agent(("get_order", {"id": "7"})))
    assert classify_turns(script.session(), MANIFEST, user_words=True) == [READ, READ]
