"""Replay from the record: which lookups answer which calls, what is saved, what is a detour."""

from __future__ import annotations

import json

import pytest

from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.replay.episode import prepare_session
from stretto_core.evaluate.replay.record import RecordSource
from stretto_core.evaluate.replay.walk import Walk
from test_replay_fakes import Script, Shop, shop_flow

EMAIL = {"email": "ann@x.org"}
USER = {"user_id": "u1"}
ORDER = {"order_id": "o1"}


def replay(script: Script, flow=None, **options):
    return replay_sessions(flow or shop_flow(get_user={}), [script.session()], ReplayOptions(**options))


def walk(script: Script, flow=None) -> Walk:
    engine = Engine(flow or shop_flow(get_user={}), EngineConfig())
    return Walk(prepare_session(script.session()), engine, RecordSource()).run()


def identify_then_read_user(shop: Shop) -> Script:
    return (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop)
            .agent(("get_user", USER)).play(shop).agent(text="Found you."))


def test_a_lookup_the_agent_later_makes_saves_its_turn() -> None:
    result = replay(identify_then_read_user(Shop()))
    assert (result.episodes, result.llm_turns, result.turns_saved) == (1, 3, 1)
    assert (result.lookups, result.used, result.detours) == (1, 1, 0)
    row = result.lookup_rows[0]
    assert row.tool == "get_user" and row.arguments == USER
    assert row.used and row.answered and not row.stand_in and row.before_next_decision


def test_a_lookup_gets_the_result_of_the_call_it_answers() -> None:
    w = walk(identify_then_read_user(Shop()))
    assert w.lookups[0].content == Shop().call("get_user", USER)[0]


def test_the_engine_never_sees_an_answered_call_or_its_result() -> None:
    w = walk(identify_then_read_user(Shop()))
    # find_user, then the lookup of get_user: the agent's own get_user is not there
    assert w.session.history == ["find_user/ok/0", "get_user/ok/0"]
    assert len(w.response_events) == 1


def test_a_lookup_across_the_agents_write_is_a_detour() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org, cancel o1").agent(("find_user", EMAIL)).play(shop)
              .agent(("cancel_order", ORDER)).play(shop).agent(("get_user", USER)).play(shop))
    result = replay(script)
    assert (result.turns_saved, result.lookups, result.detours) == (0, 1, 1)
    row = result.lookup_rows[0]
    assert row.detour and row.stand_in and not row.used and not row.before_next_decision


def test_a_detour_gets_the_nearest_recorded_result_of_its_tool_as_a_stand_in() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop)
              .agent(("cancel_order", ORDER)).play(shop).agent(("get_user", USER)).play(shop))
    assert walk(script).lookups[0].content == Shop().call("get_user", USER)[0]


def test_a_detour_of_a_tool_the_record_never_returned_gets_an_empty_object() -> None:
    shop = Shop()
    script = Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop).agent(text="Bye.")
    w = walk(script)
    assert [(r.tool, r.content, r.stand_in) for r in w.lookups] == [("get_user", "{}", True)]


def test_a_lookup_bound_from_another_calls_stand_in_can_answer_by_luck_unless_strict() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop)
              .agent(("get_user", USER)).play(shop).agent(("get_order", {"order_id": "o2"})).play(shop)
              .agent(("get_product", {"product": "desk"})).play(shop))
    flow = shop_flow(get_order={"get_product": 0.9})
    flow.binds["get_product"] = ("product", "get_order", "$.item")
    # get_order o1 is a detour whose stand-in is o2's result: its item, the desk, is what the agent reads
    loose = replay(script, flow)
    assert [(r.tool, r.used) for r in loose.lookup_rows] == [
        ("get_user", True), ("get_order", False), ("get_product", True)]
    strict = replay(script, flow, strict_stand_ins=True)
    assert [(r.tool, r.used, r.from_stand_in) for r in strict.lookup_rows] == [
        ("get_user", True, False), ("get_order", False, False), ("get_product", False, True)]
    assert (loose.turns_saved, strict.turns_saved) == (2, 1)


def test_a_detours_stand_in_is_the_same_calls_result_across_a_write_when_there_is_one() -> None:
    shop = Shop()
    script = (Script().user("I am u1").agent(("get_user", USER)).play(shop)
              .agent(("get_order", {"order_id": "o2"})).play(shop)
              .agent(("cancel_order", ORDER)).play(shop).agent(("get_order", ORDER)).play(shop))
    flow = shop_flow(get_user={"get_order": 0.9}, find_user={})
    w = walk(script, flow)
    cancelled = json.loads(w.lookups[0].content)
    assert (w.lookups[0].arguments, cancelled["order_id"], cancelled["status"]) == (ORDER, "o1", "cancelled")


def test_a_lookup_between_two_calls_of_one_turn_counts_as_used() -> None:
    shop = Shop()
    script = Script().user("I am ann@x.org (u1)").agent(("find_user", EMAIL), ("get_user", USER)).play(shop)
    flow = shop_flow(get_user={})
    flow.skip_made = False  # a flow that would look up the call already in flight
    result = replay(script, flow)
    assert (result.lookups, result.used, result.detours, result.turns_saved) == (1, 1, 0, 0)
    row = result.lookup_rows[0]
    assert row.used and not row.answered and row.before_next_decision
    assert result.episode_rows[0].calls_answered == 0


def test_the_users_phone_write_does_not_end_a_lookups_reach() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop)
              .agent(text="Please turn your phone on.")
              .user("done", ("toggle_phone", {})).play(shop)
              .agent(("get_user", USER)).play(shop))
    result = replay(script)
    assert (result.turns_saved, result.detours) == (1, 0)


def test_an_agents_own_repeat_is_not_a_saving() -> None:
    shop = Shop()
    script = (identify_then_read_user(shop).user("and again?")
              .agent(("get_user", USER)).play(shop).agent(text="Same."))
    result = replay(script)
    assert result.turns_saved == 1  # the first get_user, answered by the lookup; not the repeat
    assert result.episode_rows[0].calls_answered == 1


def test_without_lookups_nothing_is_saved_even_where_the_agent_repeats_itself() -> None:
    shop = Shop()
    script = (Script().user("hi u1").agent(("get_user", USER)).play(shop)
              .agent(("get_user", USER)).play(shop))
    result = replay(script, shop_flow(find_user={}, get_user={}))
    assert (result.turns_saved, result.lookups) == (0, 0)


def test_a_turn_is_saved_only_when_every_call_in_it_is_answered() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop)
              .agent(("get_user", USER), ("get_order", {"order_id": "o2"})).play(shop))
    w = walk(script)
    result = replay(script)
    assert (result.turns_saved, result.episode_rows[0].calls_answered) == (0, 1)
    # the engine saw the turn without the answered call
    assert w.session.history == ["find_user/ok/0", "get_user/ok/0", "get_order/ok/0"]


def test_a_chain_of_lookups_can_save_two_turns_after_one_response() -> None:
    shop = Shop()
    script = (identify_then_read_user(shop).user("what about my first order?")
              .agent(("get_order", ORDER)).play(shop).agent(text="It is pending."))
    result = replay(script, shop_flow())
    assert (result.lookups, result.turns_saved, result.detours) == (2, 2, 0)
    assert [r.tool for r in result.lookup_rows] == ["get_user", "get_order"]
    assert all(r.response == 0 for r in result.lookup_rows)


def test_a_lookup_used_after_another_of_the_agents_calls_is_not_used_before_the_next_decision() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop)
              .agent(("check_phone", {})).play(shop).agent(("get_user", USER)).play(shop))
    result = replay(script)
    row = result.lookup_rows[0]
    assert row.used and row.answered and not row.before_next_decision
    assert result.episode_rows[0].used_before_next_decision == 0


def test_a_lookup_used_after_a_reply_is_still_used_before_the_next_decision() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop)
              .agent(text="One moment.").user("ok").agent(("get_user", USER)).play(shop))
    row = replay(script).lookup_rows[0]
    assert row.answered and row.before_next_decision  # a reply is not a decision of the speculator's


def test_a_lookup_below_the_threshold_is_not_made() -> None:
    assert replay(identify_then_read_user(Shop()), theta=0.95).lookups == 0


def test_the_per_call_budget_stops_a_chain() -> None:
    shop = Shop()
    script = identify_then_read_user(shop)
    result = replay(script, shop_flow(), per_call=1)
    assert result.lookups == 1


def test_recorded_lookups_are_ignored_by_a_replay() -> None:
    from stretto_core.sessions.model import Lookup

    script = identify_then_read_user(Shop())
    script.events.insert(3, Lookup(call_id="old", tool="get_order", arguments=ORDER, content="{}"))
    assert replay(script).lookups == 1


def test_the_weighed_candidates_say_whether_the_agent_made_each_call_before_its_next_write() -> None:
    shop = Shop()
    script = (identify_then_read_user(shop).agent(("cancel_order", ORDER)).play(shop)
              .agent(("get_order", ORDER)).play(shop))
    result = replay(script, shop_flow(), weigh=True)
    first = [r for r in result.weighed_rows if r.decision == 0]
    assert [(r.tool, r.used, r.made) for r in first] == [("get_user", True, True)]
    second = [r for r in result.weighed_rows if r.decision == 1]
    # get_order o1 is made again only after the agent's write: not a use
    assert [(r.tool, r.used, r.made) for r in second] == [("get_order", False, True)]
    assert second[0].score_use == pytest.approx(0.8)


def test_saved_turns_are_priced_at_their_input_tokens_and_their_calls_over_the_turns_after() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL), tokens=100).play(shop)
              .agent(("get_user", USER), tokens=300).play(shop).agent(text="ok", tokens=500))
    row = replay(script).episode_rows[0]
    user_json = Shop().call("get_user", USER)[0]
    call_tokens = (len('get_user{"user_id": "u1"}') + len(user_json)) / 4
    assert row.saved_turn_tokens == pytest.approx(300 + call_tokens * 1)
    assert row.input_tokens == 900


def test_a_detour_is_priced_at_its_result_tokens_over_the_turns_left() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop)
              .agent(("cancel_order", ORDER)).play(shop).agent(("get_user", USER)).play(shop)
              .agent(text="done"))
    result = replay(script)
    row = result.lookup_rows[0]
    assert row.turns_left == 3 and row.result_tokens == len(Shop().call("get_user", USER)[0]) // 4
    assert result.episode_rows[0].detour_tokens == row.result_tokens * 3


def test_the_ceiling_turns_are_counted_per_episode() -> None:
    result = replay(identify_then_read_user(Shop()))
    assert result.ceiling_turns == 1  # get_user(u1) takes u1 from find_user's result


def test_a_session_without_a_manifest_is_refused_with_its_name() -> None:
    session = identify_then_read_user(Shop()).session()
    session.header.manifest = None
    with pytest.raises(Exception, match="session s1: no manifest"):
        replay_sessions(shop_flow(), [session])
