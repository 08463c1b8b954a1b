"""The `weighed` rule teaches the uses the evidence test missed at a site where it caught some (issue 25).

The agent of these sessions reads two of the user's orders at the same site and tells the user
about both; the second one it restates ("it arrived") instead of repeating a value of it, so the
evidence test catches only the first. Stretto also chains a lookup of a third order the agent
never reads, at a site where the test catches nothing.
"""

from __future__ import annotations

import json

from shop_sessions import MANIFEST
from stretto_core.learn.evidence_recall import call_as_lookup, recall
from stretto_core.learn.missed_uses import drawn_as_used, used_share
from stretto_core.learn.served import teaching_view
from stretto_core.sessions.model import LLMTurn, Lookup, Session, SessionHeader, ToolCall, ToolResult, UserMessage


def order(number: int, status: str) -> str:
    return json.dumps({"order_id": f"#W{number}", "status": status, "items": [{"item_id": f"item-{number}"}]})


def served(n: int) -> Session:
    """Served: two order lookups at the user's details, one chained after an order."""
    events = [UserMessage(text=f"What happened to my orders? I am user u{n}."),
              LLMTurn(calls=[ToolCall(call_id="c1", tool="get_user_details", arguments={"user_id": f"u{n}"})]),
              ToolResult(call_id="c1", tool="get_user_details",
                         content=json.dumps({"orders": [f"#W{n}1", f"#W{n}2", f"#W{n}3"]})),
              Lookup(call_id="stretto-1", tool="get_order_details", arguments={"order_id": f"#W{n}1"},
                     content=order(n * 10 + 1, f"pending{n}"), after_call_id="c1", site="get_user_details"),
              Lookup(call_id="stretto-2", tool="get_order_details", arguments={"order_id": f"#W{n}2"},
                     content=order(n * 10 + 2, f"delivered{n}"), after_call_id="c1", site="get_user_details"),
              Lookup(call_id="stretto-3", tool="get_order_details", arguments={"order_id": f"#W{n}3"},
                     content=order(n * 10 + 3, f"returned{n}"), after_call_id="c1", site="get_order_details"),
              LLMTurn(text=f"Your first order is pending{n}; the second one arrived.")]
    header = SessionHeader(session_id=f"srv-{n}", harness="test", manifest=MANIFEST, labels={"stretto_mode": "serve"})
    return Session(header=header, events=events)


def taught_calls(view: Session | None) -> list[str]:
    assert view is not None
    return [c.call_id for e in view.events if isinstance(e, LLMTurn) for c in e.calls]


def test_a_missed_use_at_a_site_where_the_test_caught_one_is_taught_under_weighed_and_not_under_said() -> None:
    session = served(1)
    assert "stretto-2" not in taught_calls(teaching_view(session, "said"))
    assert "stretto-2" in taught_calls(teaching_view(session, "weighed"))  # recall 0.5: one caught stands for two
    assert "stretto-2" in taught_calls(teaching_view(session))  # the default rule


def test_a_chained_lookup_at_a_site_where_the_test_caught_nothing_is_never_taught() -> None:
    for n in range(1, 30):
        assert "stretto-3" not in taught_calls(teaching_view(served(n), "weighed"))


def test_a_session_is_taught_the_same_every_time() -> None:
    assert teaching_view(served(4), "weighed") == teaching_view(served(4), "weighed")


def test_a_recorded_session_is_taught_as_it_is() -> None:
    session = served(1)
    recorded = Session(header=session.header.model_copy(update={"labels": {}}),
                       events=[e for e in session.events if not isinstance(e, Lookup)])
    assert teaching_view(recorded, "weighed") is recorded


def test_the_missed_share_makes_a_site_taught_its_caught_uses_over_the_recall() -> None:
    assert used_share(caught=1, missed=1, recall_share=0.5) == 1.0
    assert used_share(caught=1, missed=4, recall_share=0.5) == 0.25
    assert abs(used_share(caught=2, missed=10, recall_share=0.8) - 0.05) < 1e-12
    assert used_share(caught=3, missed=1, recall_share=0.1) == 1.0  # never more than all of them
    assert used_share(caught=0, missed=5, recall_share=0.5) == 0.0


def test_one_catch_among_many_lookups_of_a_site_may_be_a_stray_detour_and_teaches_no_more() -> None:
    assert used_share(caught=1, missed=19, recall_share=0.5, false_share=0.05) == 0.0
    # 8 lookups, 2 caught: (2 − 0.05·8) / (0.5 − 0.05) ≈ 3.56 uses, so 1.56 of the 6 uncaught
    assert abs(used_share(caught=2, missed=6, recall_share=0.5, false_share=0.05) - (1.6 / 0.45 - 2) / 6) < 1e-12
    assert used_share(caught=1, missed=1, recall_share=0.5, false_share=0.05) == 1.0


def test_about_the_missed_share_of_a_site_is_drawn() -> None:
    shown = [Lookup(call_id=f"stretto-{i}", tool="get_order_details", site="s") for i in range(400)]
    caught = {f"stretto-{i}" for i in range(100)}
    drawn = drawn_as_used("srv-1", shown, caught, recall_share=0.5)  # 100 more of the 300 missed
    assert not drawn & caught
    assert 70 <= len(drawn) <= 130


def test_the_recall_counts_an_own_call_the_agent_repeated_as_caught_and_a_restated_one_as_missed() -> None:
    events = [UserMessage(text="What about my orders? I am user u1."),
              LLMTurn(calls=[ToolCall(call_id="c2", tool="get_order_details", arguments={"order_id": "#W11"})]),
              ToolResult(call_id="c2", tool="get_order_details", content=order(11, "pending1")),
              LLMTurn(calls=[ToolCall(call_id="c3", tool="get_order_details", arguments={"order_id": "#W12"})]),
              ToolResult(call_id="c3", tool="get_order_details", content=order(12, "delivered1")),
              LLMTurn(text="Your first order is pending1; the second one arrived.")]
    session = Session(header=SessionHeader(session_id="rec-1", harness="test", manifest=MANIFEST), events=events)
    counted = recall([session], MANIFEST)["get_order_details"]
    assert (counted.tested, counted.caught) == (2, 1)


def test_an_own_call_put_in_a_lookups_place_leaves_no_call_of_it() -> None:
    events = [LLMTurn(text="Let me look.", calls=[ToolCall(call_id="c2", tool="get_order_details",
                                                          arguments={"order_id": "#W11"})]),
              ToolResult(call_id="c2", tool="get_order_details", content=order(11, "pending1"))]
    session = Session(header=SessionHeader(session_id="rec-2", harness="test", manifest=MANIFEST), events=events)
    view = call_as_lookup(session, "c2")
    assert [type(e).__name__ for e in view.events] == ["Lookup"]
    lookup = view.events[0]
    assert isinstance(lookup, Lookup) and lookup.arguments == {"order_id": "#W11"} and "pending1" in lookup.content


def test_served_sessions_counted_in_parts_under_weighed_add_up_to_counting_them_at_once() -> None:
    from shop_sessions import shop_sessions
    from stretto_core.evaluate.served_loop import serve_batch
    from stretto_core.flow.ir import learn, merge
    from stretto_core.flow.online import count_taught

    sessions = shop_sessions(30)
    served, _ = serve_batch(learn(sessions[:10], MANIFEST), sessions[10:30])
    assert any(teaching_view(s, "weighed") != teaching_view(s, "said") for s in served)
    first, second = count_taught(served[:7], MANIFEST, "weighed"), count_taught(served[7:], MANIFEST, "weighed")
    whole = count_taught(served, MANIFEST, "weighed")
    assert first is not None and second is not None and whole is not None
    assert merge(first, second).counts == whole.derive().counts
