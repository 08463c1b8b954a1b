"""A served lookup counts as the agent's call only on a value it was the first to show (issue 25).

The agent of these sessions looks up the order it came for and nothing more. Served, stretto also
chains a lookup of the user's other order: its result repeats the user's name and the field names
the first order already showed, so the agent's reply mentions them without ever reading it.
"""

from __future__ import annotations

import json

from shop_sessions import MANIFEST
from stretto_core.evaluate.served_loop import serve_batch
from stretto_core.flow.ir import learn
from stretto_core.learn.first_source import first_shown
from stretto_core.learn.served import teaching_sessions, teaching_view
from stretto_core.sessions.model import LLMTurn, Lookup, Session, SessionHeader, ToolCall, ToolResult, UserMessage


def order(number: int, status: str) -> str:
    return json.dumps({"order_id": f"#W{number}", "name": "Ada Lovelace", "status": status,
                       "items": [{"item_id": f"item-{number}"}]})


def user_turns(n: int) -> list:
    """The user asks, the agent reads the user's details (two orders)."""
    return [UserMessage(text=f"Please cancel my pending order. I am user u{n}."),
            LLMTurn(calls=[ToolCall(call_id="c1", tool="get_user_details", arguments={"user_id": f"u{n}"})]),
            ToolResult(call_id="c1", tool="get_user_details",
                       content=json.dumps({"name": "Ada Lovelace", "orders": [f"#W{n}1", f"#W{n}2"]}))]


def reply_and_cancel(n: int) -> list:
    """The agent tells the user about the first order and cancels it."""
    text = f"Ada Lovelace, the status of your order #W{n}1 is pending{n}; I will cancel it."
    return [LLMTurn(text=text, calls=[ToolCall(call_id="c3", tool="cancel_pending_order",
                                               arguments={"order_id": f"#W{n}1", "reason": "no longer needed"})]),
            ToolResult(call_id="c3", tool="cancel_pending_order", content='{"status": "cancelled"}')]


def recorded(n: int) -> Session:
    """What the agent does unserved: it reads its first order only."""
    events = [*user_turns(n),
              LLMTurn(calls=[ToolCall(call_id="c2", tool="get_order_details", arguments={"order_id": f"#W{n}1"})]),
              ToolResult(call_id="c2", tool="get_order_details", content=order(n * 10 + 1, f"pending{n}")),
              *reply_and_cancel(n)]
    return Session(header=SessionHeader(session_id=f"rec-{n}", harness="test", manifest=MANIFEST), events=events)


def served(n: int) -> Session:
    """The same episode served: stretto looked the first order up, then chained the second."""
    events = [*user_turns(n),
              Lookup(call_id="stretto-1", tool="get_order_details", arguments={"order_id": f"#W{n}1"},
                     content=order(n * 10 + 1, f"pending{n}"), after_call_id="c1", site="get_user_details"),
              Lookup(call_id="stretto-2", tool="get_order_details", arguments={"order_id": f"#W{n}2"},
                     content=order(n * 10 + 2, "delivered"), after_call_id="c1", site="get_order_details"),
              *reply_and_cancel(n)]
    header = SessionHeader(session_id=f"srv-{n}", harness="test", manifest=MANIFEST, labels={"stretto_mode": "serve"})
    return Session(header=header, events=events)


def chained_lookups(flow, sessions: list[Session]) -> int:
    """How many lookups the flow makes of an order right after another order's result."""
    out, _ = serve_batch(flow, sessions)
    return sum(1 for s in out for e in s.events
               if isinstance(e, Lookup) and e.tool == "get_order_details" and e.site == "get_order_details")


def test_a_value_counts_only_for_the_lookup_that_first_showed_it() -> None:
    fresh = first_shown(served(1))
    assert "pending1" in fresh["stretto-1"] and "status" in fresh["stretto-1"]
    assert "ada lovelace" not in fresh["stretto-1"]  # the user's details showed it first
    assert "#w11" not in fresh["stretto-1"]  # the lookup was called with it
    assert "status" not in fresh["stretto-2"] and "ada lovelace" not in fresh["stretto-2"]
    assert "delivered" in fresh["stretto-2"]


def test_the_chained_lookup_the_agent_never_read_is_not_taught_as_its_call() -> None:
    for rule in ("said", "used"):
        taught = teaching_view(served(1), rule)
        assert taught is not None
        assert [c.arguments.get("order_id") for c in taught.agent_calls()
                if c.tool == "get_order_details"] == (["#W11"] if rule == "said" else [])


def test_served_sessions_teach_no_chain_the_unserved_ones_would_not() -> None:
    unserved = [recorded(n) for n in range(1, 7)]
    later = [recorded(n) for n in range(7, 10)]
    assert chained_lookups(learn(unserved, MANIFEST), later) == 0
    taught = list(teaching_sessions([served(n) for n in range(1, 7)], "said"))
    assert chained_lookups(learn(taught, MANIFEST), later) == 0  # the rule before: 3, one a session
    assert [len(s.agent_calls()) for s in taught] == [len(s.agent_calls()) for s in unserved]


def test_recorded_sessions_are_taught_as_they_are_and_learn_the_same_flow_byte_for_byte() -> None:
    sessions = [recorded(n) for n in range(1, 7)]
    assert teaching_view(sessions[0], "said") is sessions[0]
    assert learn(list(teaching_sessions(sessions, "said")), MANIFEST).to_json() == learn(sessions, MANIFEST).to_json()


def test_a_line_of_a_value_of_several_lines_the_agent_quotes_is_evidence_it_read_the_lookup() -> None:
    reviews = {"Cozy Stay": "Rating: 4.7\nReviews: A charming atmosphere in a quiet street",
               "Good Night": "Rating: 3.9\nReviews: Noisy at night"}
    events = [UserMessage(text="Which hotel in Paris is quiet?"),
              LLMTurn(calls=[ToolCall(call_id="c1", tool="get_user_details", arguments={"user_id": "paris"})]),
              ToolResult(call_id="c1", tool="get_user_details", content=json.dumps({"hotels": list(reviews)})),
              Lookup(call_id="stretto-1", tool="get_product_details", arguments={"product_id": "Cozy Stay"},
                     content=json.dumps(reviews), after_call_id="c1", site="get_user_details"),
              LLMTurn(text="Cozy Stay: reviewers praise a charming atmosphere in a quiet street.")]
    header = SessionHeader(session_id="hotels", harness="test", manifest=MANIFEST, labels={"stretto_mode": "serve"})
    taught = teaching_view(Session(header=header, events=events), "said")
    assert [c.tool for c in taught.agent_calls()] == ["get_user_details", "get_product_details"]
