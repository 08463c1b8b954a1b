"""What a served session teaches the next flow (learn/served.py), and the served session record replay leaves."""

from __future__ import annotations

import pytest

from shop_sessions import MANIFEST, shop_sessions
from stretto_core.evaluate.served_loop import batches_of, run_loop, serve_batch
from stretto_core.flow.ir import learn
from stretto_core.learn.served import RULES, is_served, prior_weight_at, teaching_sessions, teaching_view
from stretto_core.sessions.model import LLMTurn, Lookup, Session, SessionHeader, ToolCall, ToolResult


@pytest.fixture(scope="module")
def served() -> tuple[list[Session], list[Session]]:
    sessions = shop_sessions(30)
    flow = learn(sessions[:15], MANIFEST)
    return sessions[15:], serve_batch(flow, sessions[15:])[0]


def lookups(session: Session) -> list[Lookup]:
    return [e for e in session.events if isinstance(e, Lookup)]


def test_a_served_session_lacks_the_calls_its_lookups_answered_and_holds_the_lookups(served) -> None:
    recorded, after = served
    assert all(is_served(s) for s in after if lookups(s))
    answered = sum(1 for s in after for lk in lookups(s) if lk.used)
    assert answered > 0
    assert sum(len(s.agent_calls()) for s in after) == sum(len(s.agent_calls()) for s in recorded) - answered
    assert not any(is_served(s) for s in recorded)


def test_each_rule_teaches_what_it_says(served) -> None:
    _, after = served
    session = next(s for s in after if len(lookups(s)) >= 2)
    calls = len(session.agent_calls())
    assert teaching_view(session, "drop") is session
    assert teaching_view(session, "holdout") is None
    assert len(teaching_view(session, "all").agent_calls()) == calls + len(lookups(session))
    used = teaching_view(session, "used")
    assert calls <= len(used.agent_calls()) <= calls + len(lookups(session))
    assert teaching_view(recorded_like(session), "holdout") is not None


def recorded_like(session: Session) -> Session:
    return Session(header=session.header.model_copy(update={"labels": {}}), events=[
        e for e in session.events if not isinstance(e, Lookup)])


def test_a_lookup_counts_as_the_agents_call_only_when_a_value_of_it_is_passed_on_before_the_next_write() -> None:
    header = SessionHeader(session_id="s", harness="test", manifest=MANIFEST, labels={"stretto_mode": "serve"})
    user = ToolCall(call_id="c1", tool="get_user_details", arguments={"user_id": "u1"})
    events = [LLMTurn(calls=[user]),
              ToolResult(call_id="c1", tool="get_user_details", content='{"orders": ["#W1", "#W2"]}'),
              Lookup(call_id="stretto-1", tool="get_order_details", arguments={"order_id": "#W1"},
                     content='{"order_id": "#W1", "items": [{"item_id": "item-77"}]}'),
              Lookup(call_id="stretto-2", tool="get_order_details", arguments={"order_id": "#W2"},
                     content='{"order_id": "#W2", "items": [{"item_id": "item-88"}]}'),
              LLMTurn(calls=[ToolCall(call_id="c2", tool="cancel_pending_order",
                                      arguments={"order_id": "#W1", "item": "item-77"})]),
              ToolResult(call_id="c2", tool="cancel_pending_order", content="ok"),
              LLMTurn(calls=[ToolCall(call_id="c3", tool="get_product_details", arguments={"product_id": "item-88"})]),
              ToolResult(call_id="c3", tool="get_product_details", content="{}")]
    session = Session(header=header, events=events)
    taught = teaching_view(session, "used")
    assert [c.tool for c in taught.agent_calls()] == ["get_user_details", "get_order_details", "cancel_pending_order",
                                                      "get_product_details"]
    assert [c.arguments for c in taught.agent_calls()][1] == {"order_id": "#W1"}  # #W2's value came after the write
    repeated = session.model_copy(update={"events": [*events[:5], events[5].model_copy(update={"repeats": "stretto-1"}),
                                                     *events[6:]]})
    assert len(teaching_view(session, "all").agent_calls()) == 5
    assert len(teaching_view(repeated, "all").agent_calls()) == 4  # the repeated lookup is the agent's own call already


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="one of drop, all"):
        teaching_view(shop_sessions(1)[0], "everything")


def test_the_prior_weight_falls_as_the_agents_own_sessions_arrive() -> None:
    assert prior_weight_at(0, 100, 30) == 100
    assert prior_weight_at(30, 100, 30) == 50
    assert prior_weight_at(270, 100, 30) == pytest.approx(10)
    assert prior_weight_at(500, 100, float("inf")) == 100


def test_the_loop_runs_every_rule_and_the_reference_for_each_round() -> None:
    sessions = shop_sessions(24)
    result = run_loop(sessions, RULES, rounds=5, learn_flow=lambda ss: learn(list(ss), MANIFEST))
    assert set(result.rounds_by_rule) == {"reference", *RULES}
    assert all(len(scores) == 5 for scores in result.rounds_by_rule.values())
    assert result.rounds_by_rule["reference"][0].saved > 0
    assert len(batches_of(sessions, 5)) == 6 and sum(map(len, batches_of(sessions, 5))) == 24
    assert list(teaching_sessions([], "used")) == []
