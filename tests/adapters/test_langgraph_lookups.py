"""The LangGraph adapter makes the flow's lookups inside the agent's own tool results, and only reads.

Every test runs through a real `create_agent` with `StrettoMiddleware` and through a plain
`StateGraph` whose `ToolNode` is wrapped by `StrettoToolWrapper`, by `invoke` and by `ainvoke`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from langgraph_support import (FRONTS, MODES, READS, WRITES, Shop, calls, order_then_reply, reply,
                               serve_once, session_files, tool_messages, toy_flow)
from stretto_core.sessions.model import Lookup, ToolResult

ORDER_O1 = json.dumps({"order_id": "O1", "customer_id": "C7", "status": "delivered"})

both = pytest.mark.parametrize("front", FRONTS)
modes = pytest.mark.parametrize("mode", MODES)


@both
@modes
def test_the_looked_up_customer_reaches_what_the_model_sees_next(front: str, mode: str, tmp_path: Path) -> None:
    shop = Shop()
    messages, model, _ = serve_once(front, mode, shop, order_then_reply(), tmp_path, toy_flow(),
                                    reads=READS, writes=WRITES)
    seen = tool_messages(model.seen[1])
    assert len(seen) == 1 and seen[0].content.startswith(ORDER_O1)
    assert '"tier": "gold"' in seen[0].content and "get_customer" in seen[0].content
    assert shop.called("get_customer") == [{"customer_id": "C7"}]
    assert len(tool_messages(messages)) == 1  # the lookup rides inside the result: no extra message


@both
@modes
def test_a_write_is_never_looked_up_even_when_the_flow_says_so(front: str, mode: str, tmp_path: Path) -> None:
    shop = Shop()
    serve_once(front, mode, shop, order_then_reply(), tmp_path, toy_flow(reckless=True),
               reads=READS + ["audit"], writes=WRITES)
    assert shop.called("refund") == []
    assert shop.called("get_customer") == [{"customer_id": "C7"}]  # the flow did serve its reads


@both
def test_the_reckless_flow_would_look_up_the_write_if_told_it_was_a_read(front: str, tmp_path: Path) -> None:
    shop = Shop()  # the control of the test above: the write is kept out by the authority alone
    serve_once(front, "sync", shop, order_then_reply(), tmp_path, toy_flow(reckless=True),
               reads=READS + ["audit", "refund"])
    assert shop.called("refund") == [{"order_id": "O1"}]


@both
@modes
def test_a_tool_no_authority_declares_is_never_looked_up(front: str, mode: str, tmp_path: Path) -> None:
    shop = Shop()
    serve_once(front, mode, shop, order_then_reply(), tmp_path, toy_flow(), reads=READS, writes=WRITES)
    assert shop.called("audit") == []
    control = Shop()
    serve_once(front, mode, control, order_then_reply(), tmp_path, toy_flow(), reads=READS + ["audit"])
    assert control.called("audit") == [{"customer_id": "C7"}]


@both
@modes
def test_the_tools_own_metadata_says_which_are_reads(front: str, mode: str, tmp_path: Path) -> None:
    shop = Shop(metadata=True)  # readOnlyHint on get_order/get_customer (True) and refund (False)
    serve_once(front, mode, shop, order_then_reply(), tmp_path, toy_flow(reckless=True), reads=["audit"])
    assert shop.called("get_customer") == [{"customer_id": "C7"}]
    assert shop.called("refund") == []


@both
def test_a_flow_without_any_authority_makes_no_lookup(front: str, tmp_path: Path) -> None:
    shop = Shop()
    serve_once(front, "sync", shop, order_then_reply(), tmp_path, toy_flow())
    assert [name for name, _ in shop.calls] == ["get_order"]


@both
@modes
def test_parallel_calls_of_one_turn_each_get_their_own_lookups(front: str, mode: str, tmp_path: Path) -> None:
    shop = Shop()
    steps = [calls(("get_order", {"order_id": "O1"}), ("get_order", {"order_id": "O2"})), reply()]
    _, model, _ = serve_once(front, mode, shop, steps, tmp_path, toy_flow(), reads=READS, writes=WRITES)
    seen = {m.tool_call_id: m.content for m in tool_messages(model.seen[1])}
    assert set(seen) == {"call_1", "call_2"}
    assert '"customer_id": "C7", "tier": "gold"' in seen["call_1"]
    assert '"customer_id": "C8", "tier": "gold"' in seen["call_2"]
    assert sorted(a["customer_id"] for a in shop.called("get_customer")) == ["C7", "C8"]
    (session,) = session_files(tmp_path)
    results = [e for e in session.events if isinstance(e, ToolResult)]
    assert sorted(r.call_id for r in results) == ["call_1", "call_2"] and all(r.appended for r in results)


@both
@modes
def test_parallel_results_are_taken_in_the_order_the_model_made_the_calls(front: str, mode: str,
                                                                         tmp_path: Path) -> None:
    shop = Shop(order_delay={"O1": 0.2})  # the first call comes back last
    steps = [calls(("get_order", {"order_id": "O1"}), ("get_order", {"order_id": "O2"})), reply()]
    serve_once(front, mode, shop, steps, tmp_path, toy_flow(), reads=READS, writes=WRITES)
    assert sorted(args["order_id"] for args in shop.called("get_order")) == ["O1", "O2"]
    (session,) = session_files(tmp_path)
    taken = [(e.kind, e.call_id if isinstance(e, ToolResult) else e.after_call_id) for e in session.events
             if isinstance(e, (ToolResult, Lookup))]
    assert taken == [("tool_result", "call_1"), ("lookup", "call_1"), ("tool_result", "call_2"), ("lookup", "call_2")]


@both
@modes
def test_a_result_made_of_blocks_gets_the_lookups_as_one_more_text_block(front: str, mode: str,
                                                                          tmp_path: Path) -> None:
    shop = Shop(blocks=True)
    _, model, _ = serve_once(front, mode, shop, order_then_reply(), tmp_path, toy_flow(), reads=READS)
    (message,) = tool_messages(model.seen[1])
    assert isinstance(message.content, list) and len(message.content) == 2
    assert message.content[0] == {"type": "text", "text": ORDER_O1}
    assert message.content[1]["type"] == "text" and '"tier": "gold"' in message.content[1]["text"]


@both
@pytest.mark.parametrize("misbehaviour", ["raise", "hang", "garbage"])
@modes
def test_a_lookup_that_misbehaves_leaves_the_agents_result_unchanged_and_is_recorded_failed(
        front: str, misbehaviour: str, mode: str, tmp_path: Path) -> None:
    shop = Shop(customer=misbehaviour)
    try:
        messages, model, _ = serve_once(front, mode, shop, order_then_reply(), tmp_path, toy_flow(),
                                        reads=READS, lookup_timeout=0.3)
        still_hanging = misbehaviour == "hang" and not shop.release.is_set() and not shop.finished
    finally:
        shop.release.set()
    (message,) = tool_messages(model.seen[1])
    assert message.status == "success"
    assert message.content == ORDER_O1  # a lookup stretto gave up on is recorded, never shown
    assert messages[-1].content == "done"
    if misbehaviour == "hang":
        assert still_hanging  # the agent went on while the lookup was still stuck
    (session,) = session_files(tmp_path)
    (lookup,) = [e for e in session.events if isinstance(e, Lookup)]
    assert lookup.tool == "get_customer" and lookup.error and lookup.abandoned
    assert ("took longer" in lookup.content) if misbehaviour == "hang" else lookup.content.startswith("Error")


@both
@modes
def test_a_command_from_a_tool_passes_through_untouched(front: str, mode: str, tmp_path: Path) -> None:
    shop = Shop(order_command=True)
    _, model, _ = serve_once(front, mode, shop, order_then_reply(), tmp_path, toy_flow(), reads=READS)
    (message,) = tool_messages(model.seen[1])
    assert message.content == "order noted" and shop.called("get_customer") == []


def test_the_tool_message_keeps_its_ids_and_status(tmp_path: Path) -> None:
    shop = Shop()
    messages, _, _ = serve_once("agent", "sync", shop, order_then_reply(), tmp_path, toy_flow(), reads=READS)
    (message,) = tool_messages(messages)
    assert isinstance(message, ToolMessage)
    assert (message.tool_call_id, message.name, message.status) == ("call_1", "get_order", "success")
