"""`weighed` with the evidence test's recall per tool: where the test is blind, a lookup is taught by its score."""

from __future__ import annotations

import json

from shop_sessions import MANIFEST, shop_sessions
from stretto_core.evaluate.served_loop import serve_batch
from stretto_core.flow.ir import count_sessions, learn, merge
from stretto_core.learn.evidence_recall import tool_recall
from stretto_core.learn.missed_uses import ToolRecall, drawn_by_score
from stretto_core.learn.served import BLIND_RECALL, BLIND_SHARE, teaching_sessions, teaching_view
from stretto_core.sessions.model import LLMTurn, Lookup, Session, SessionHeader, ToolCall, ToolResult


def served(n: int, score: float) -> Session:
    """Served: a product lookup the agent reads but only restates ("it is available")."""
    events = [LLMTurn(calls=[ToolCall(call_id="c1", tool="get_order_details", arguments={"order_id": f"#W{n}"})]),
              ToolResult(call_id="c1", tool="get_order_details",
                         content=json.dumps({"order_id": f"#W{n}", "items": [{"product_id": f"p{n}"}]})),
              Lookup(call_id="stretto-1", tool="get_product_details", arguments={"product_id": f"p{n}"},
                     content=json.dumps({"product_id": f"p{n}", "stock": f"shelf-{n}-left"}), after_call_id="c1",
                     site="get_order_details", score=score),
              LLMTurn(text="It is available.")]
    header = SessionHeader(session_id=f"srv-{n}", harness="test", manifest=MANIFEST, labels={"stretto_mode": "serve"})
    return Session(header=header, events=events)


def table(by_tool: dict[str, float]) -> ToolRecall:
    return ToolRecall(by_tool, BLIND_RECALL, BLIND_SHARE)


def taught(view: Session | None) -> bool:
    assert view is not None
    return any(c.call_id == "stretto-1" for e in view.events if isinstance(e, LLMTurn) for c in e.calls)


def test_an_uncaught_lookup_at_a_blind_tool_is_taught_about_as_often_as_its_share_of_its_score() -> None:
    blind = table({"get_product_details": 0.05})
    often = sum(taught(teaching_view(served(n, 0.8), "weighed", blind)) for n in range(400))
    rarely = sum(taught(teaching_view(served(n, 0.2), "weighed", blind)) for n in range(400))
    assert abs(often - 400 * 0.8 * BLIND_SHARE) <= 40 and abs(rarely - 400 * 0.2 * BLIND_SHARE) <= 25
    assert rarely < often
    assert not any(taught(teaching_view(served(n, 0.8), "weighed")) for n in range(200))  # no table: never


def test_a_tool_the_test_sees_well_is_not_taught_by_score() -> None:
    assert not any(taught(teaching_view(served(n, 0.9), "weighed", table({"get_product_details": 0.9}))) for n in range(50))


def test_the_draw_takes_only_the_share_of_the_score_asked() -> None:
    lookups = [Lookup(call_id=f"l{i}", tool="t", arguments={}, content="x", score=0.8) for i in range(400)]
    whole = drawn_by_score("s", lookups, set(), {"t"})
    half = drawn_by_score("s", lookups, set(), {"t"}, share=0.5)
    assert half < whole and 120 <= len(half) <= 200 and 280 <= len(whole) <= 360
    assert drawn_by_score("s", lookups, {"l1"}, {"t"}) == whole - {"l1"}


def test_recall_per_tool_is_pulled_toward_the_prior_where_few_calls_were_tested() -> None:
    recall = tool_recall(shop_sessions(20), MANIFEST)
    assert recall and all(MANIFEST.is_read(tool) for tool in recall)
    assert all(0.0 < r < 1.0 for r in recall.values())


def test_served_sessions_taught_with_a_recall_table_count_the_same_in_parts_as_at_once() -> None:
    sessions = shop_sessions(30)
    batch, _ = serve_batch(learn(sessions[:10], MANIFEST), sessions[10:30])
    blind = table({tool: 0.05 for tool in ("get_user_details", "get_order_details", "get_product_details")})
    views = list(teaching_sessions(batch, "weighed", blind))
    assert views != list(teaching_sessions(batch, "weighed"))
    first = count_sessions(list(teaching_sessions(batch[:7], "weighed", blind)), MANIFEST)
    second = count_sessions(list(teaching_sessions(batch[7:], "weighed", blind)), MANIFEST)
    assert merge(first, second).counts == count_sessions(views, MANIFEST).derive().counts


def test_with_a_ramp_a_tool_is_taught_by_score_as_far_as_its_recall_is_short_of_the_bar() -> None:
    ramp = ToolRecall({"get_product_details": 0.25}, 0.5, 1.0, ramp=True)
    assert ramp.blindness() == {"get_product_details": 0.5}
    halfway = sum(taught(teaching_view(served(n, 0.8), "weighed", ramp)) for n in range(400))
    assert abs(halfway - 400 * 0.8 * 0.5) <= 40
    at_the_bar = ToolRecall({"get_product_details": 0.5}, 0.5, 1.0, ramp=True)
    assert at_the_bar.blindness() == {}
    assert not any(taught(teaching_view(served(n, 0.8), "weighed", at_the_bar)) for n in range(100))
    assert ToolRecall({"t": 0.25}, 0.5, 1.0).blindness() == {"t": 1.0}  # no ramp: a cliff
