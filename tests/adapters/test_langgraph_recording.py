"""The LangGraph adapter records sessions: one per thread, or one per run without a thread."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_support import (FRONTS, MODES, READS, WRITES, ScriptedChatModel, Shop, calls, invoke, order_then_reply,
                               plain_graph, reply, serve_once, session_files, toy_flow)
from stretto_core.sessions.model import LLMTurn, Lookup, ToolResult, UserMessage
from stretto_langgraph import StrettoMiddleware, StrettoToolWrapper

ORDER_O1 = json.dumps({"order_id": "O1", "customer_id": "C7", "status": "delivered"})


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize("mode", MODES)
def test_the_session_file_holds_the_users_words_the_turns_with_usage_the_results_and_the_lookups(
        front: str, mode: str, tmp_path: Path) -> None:
    serve_once(front, mode, Shop(), order_then_reply(), tmp_path, toy_flow(), reads=READS, writes=WRITES)
    (session,) = session_files(tmp_path)
    assert session.header.harness == "langgraph"
    kinds = [e.kind for e in session.events]
    assert kinds[:4] == ["user", "llm_turn", "tool_result", "lookup"]
    user, turn, result, lookup = session.events[:4]
    assert isinstance(user, UserMessage) and user.text == "please refund order O1"
    assert isinstance(turn, LLMTurn) and [c.tool for c in turn.calls] == ["get_order"]
    assert turn.usage is not None and (turn.usage.input_tokens, turn.usage.output_tokens) == (100, 10)
    assert isinstance(result, ToolResult) and result.content == ORDER_O1 and result.appended
    assert isinstance(lookup, Lookup) and lookup.tool == "get_customer" and not lookup.error
    assert lookup.arguments == {"customer_id": "C7"} and lookup.after_call_id == "call_1"
    if front == "agent":  # the model wrapper also sees the closing reply, and the model's name
        assert session.header.agent_model == "scripted"
        assert kinds == ["user", "llm_turn", "tool_result", "lookup", "llm_turn"]
        last = session.events[-1]
        assert isinstance(last, LLMTurn) and last.text == "done" and last.usage.output_tokens == 5


def _thread_runs(front: str, mode: str, store: Path, texts: list[str], server: object | None = None,
                 checkpointer: InMemorySaver | None = None, thread: str = "t1") -> object:
    shop = Shop()
    model = ScriptedChatModel(steps=[s for _ in texts for s in order_then_reply()])
    if front == "agent":
        server = server or StrettoMiddleware(toy_flow(), reads=READS, store=store)
        graph = create_agent(model, shop.tools, middleware=[server], checkpointer=checkpointer)
    else:
        server = server or StrettoToolWrapper(toy_flow(), reads=READS, store=store)
        graph = plain_graph(model, server.tool_node(shop.tools), checkpointer)
    for text in texts:
        invoke(graph, text, mode, {"configurable": {"thread_id": thread}})
    return server


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize("mode", MODES)
def test_a_thread_is_one_session_across_its_runs(front: str, mode: str, tmp_path: Path) -> None:
    _thread_runs(front, mode, tmp_path, ["refund O1", "and once more"], checkpointer=InMemorySaver())
    (session,) = session_files(tmp_path)
    assert [e.text for e in session.events if isinstance(e, UserMessage)] == ["refund O1", "and once more"]
    assert session.header.labels == {"thread_id": "t1"}
    assert len([e for e in session.events if isinstance(e, ToolResult)]) == 2
    turns = [(e.text, [c.tool for c in e.calls]) for e in session.events if isinstance(e, LLMTurn)]
    expected = [("", ["get_order"]), ("done", []), ("", ["get_order"]), ("done", [])]
    # a plain graph has no model hook: a closing reply is seen when the thread next reaches its tools
    assert turns == (expected if front == "agent" else expected[:3])


@pytest.mark.parametrize("front", FRONTS)
def test_a_thread_run_by_one_event_loop_after_another_keeps_serving_its_parallel_calls(front: str,
                                                                                       tmp_path: Path) -> None:
    shop = Shop(customer="slow")
    turns = [calls(("get_order", {"order_id": "O1"}), ("get_order", {"order_id": "O2"})), reply(),
             calls(("get_order", {"order_id": "O3"}), ("get_order", {"order_id": "O4"}), prefix="again"), reply()]
    model = ScriptedChatModel(steps=turns)
    if front == "agent":
        graph = create_agent(model, shop.tools, middleware=[StrettoMiddleware(toy_flow(), reads=READS, store=tmp_path)],
                             checkpointer=InMemorySaver())
    else:
        graph = plain_graph(model, StrettoToolWrapper(toy_flow(), reads=READS, store=tmp_path).tool_node(shop.tools),
                            InMemorySaver())
    for text in ("refund O1 and O2", "and O3 and O4"):  # asyncio.run each time: a new event loop
        invoke(graph, text, "async", {"configurable": {"thread_id": "t"}})
    assert sorted(a["customer_id"] for a in shop.called("get_customer")) == ["C10", "C7", "C8", "C9"]
    (session,) = session_files(tmp_path)
    assert len([e for e in session.events if isinstance(e, ToolResult) and e.appended]) == 4


def test_each_run_without_a_thread_is_a_session_of_its_own_closed_when_it_ends(tmp_path: Path) -> None:
    shop = Shop()
    middleware = StrettoMiddleware(toy_flow(), reads=READS, store=tmp_path)
    model = ScriptedChatModel(steps=order_then_reply() + order_then_reply())
    agent = create_agent(model, shop.tools, middleware=[middleware])
    invoke(agent, "first", "sync")
    invoke(agent, "second", "async")
    sessions = session_files(tmp_path)
    assert sorted(s.events[0].text for s in sessions) == ["first", "second"]
    assert all(s.header.labels == {} for s in sessions)
    assert len(middleware._serving.conversations) == 0


@pytest.mark.parametrize("front", FRONTS)
def test_a_thread_resumed_by_a_new_server_records_from_its_latest_user_message(front: str, tmp_path: Path) -> None:
    saver = InMemorySaver()
    _thread_runs(front, "sync", tmp_path / "before", ["refund O1"], checkpointer=saver)
    _thread_runs(front, "sync", tmp_path / "after", ["and once more"], checkpointer=saver)
    (later,) = session_files(tmp_path / "after")
    assert [e.text for e in later.events if isinstance(e, UserMessage)] == ["and once more"]
    assert [c.call_id for e in later.events if isinstance(e, LLMTurn) for c in e.calls] == ["call_1"]


@pytest.mark.parametrize("front", FRONTS)
def test_the_least_recently_used_thread_is_closed_when_too_many_are_open(front: str, tmp_path: Path) -> None:
    server = (StrettoMiddleware if front == "agent" else StrettoToolWrapper)(
        toy_flow(), reads=READS, store=tmp_path, max_open_threads=1)
    _thread_runs(front, "sync", tmp_path, ["one"], server=server, thread="a")
    _thread_runs(front, "sync", tmp_path, ["two"], server=server, thread="b")
    assert server.live_session("a") is None and server.live_session("b") is not None
    assert len(session_files(tmp_path)) == 2


@pytest.mark.parametrize("front", FRONTS)
def test_a_store_that_cannot_be_written_never_breaks_the_agent(front: str, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store should be")
    shop = Shop()
    messages, model, _ = serve_once(front, "sync", shop, order_then_reply(), blocker / "sessions", toy_flow(),
                                    reads=READS)
    assert messages[-1].content == "done"
    assert shop.called("get_customer") == [{"customer_id": "C7"}]


def test_an_agent_model_given_in_the_options_names_the_sessions_model(tmp_path: Path) -> None:
    serve_once("agent", "sync", Shop(), order_then_reply(), tmp_path, None, agent_model="gpt-4.1")
    (session,) = session_files(tmp_path)
    assert session.header.agent_model == "gpt-4.1"


def test_with_store_false_nothing_is_written_and_lookups_are_still_made(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    shop = Shop()
    serve_once("agent", "sync", shop, order_then_reply(), False, toy_flow(), reads=READS)
    assert shop.called("get_customer") == [{"customer_id": "C7"}]
    assert list(tmp_path.rglob("*.jsonl")) == []
