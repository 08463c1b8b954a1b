"""The ADK plugin on a toy shop, through ADK's real Runner with a scripted model."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from google.adk.plugins.base_plugin import BasePlugin

from adk_support import (SHOP_READS, Shop, function_responses, run_app, session_file, shop_agent, shop_flow,
                         steps)
from stretto_adk import RESULT_KEY, StrettoPlugin
from stretto_core import Stretto, read_session
from stretto_core.sessions.model import Lookup, LLMTurn, ToolResult, UserMessage

REFUND_O5 = [[("get_order", {"order_id": "O5"})], [("refund", {"order_id": "O5"})], "done"]


def plugin(store: Path, **options: Any) -> StrettoPlugin:
    options.setdefault("reads", SHOP_READS)
    options.setdefault("writes", ["refund"])
    return StrettoPlugin(flow=options.pop("flow", None) or shop_flow(), store=store, **options)


def seen_after_first_call(agent: Any) -> Any:
    """The get_order result as the model saw it on its second call."""
    (response,) = function_responses(agent.model.requests[1])
    assert response.name == "get_order"
    return response.response


@pytest.mark.parametrize("text_results", [False, True], ids=["dict result", "str result"])
def test_the_lookup_reaches_what_the_model_sees_next(tmp_path: Path, text_results: bool) -> None:
    shop = Shop(text_results=text_results)
    agent = shop_agent(shop, steps(*REFUND_O5))
    asyncio.run(run_app(agent, [plugin(tmp_path)], ["please refund order O5"]))

    seen = seen_after_first_call(agent)
    assert shop.ran_tools() == ["get_order", "get_customer", "refund"]
    if text_results:
        assert set(seen) == {"result"}
        assert seen["result"].startswith(json.dumps({"order_id": "O5", "customer_id": "C5", "status": "delivered"}))
        appendix = seen["result"]
    else:
        assert {k: v for k, v in seen.items() if k != RESULT_KEY} == {
            "order_id": "O5", "customer_id": "C5", "status": "delivered"}
        appendix = seen[RESULT_KEY]
    assert 'get_customer {"customer_id": "C5"}' in appendix
    assert '"tier": "gold"' in appendix


class Returns(StrettoPlugin):
    """The plugin, keeping what its after_tool_callback returned per tool."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.returned: list[tuple[str, Any]] = []

    async def after_tool_callback(self, **kwargs: Any) -> Any:
        value = await super().after_tool_callback(**kwargs)
        self.returned.append((kwargs["tool"].name, value))
        return value


class Later(BasePlugin):
    def __init__(self) -> None:
        super().__init__(name="later")
        self.saw: list[str] = []

    async def after_tool_callback(self, *, tool: Any, **_: Any) -> None:
        self.saw.append(tool.name)


def test_the_plugin_returns_none_when_there_is_nothing_to_add(tmp_path: Path) -> None:
    shop = Shop()
    agent_saw: list[str] = []
    agent = shop_agent(shop, steps(*REFUND_O5),
                       after_tool_callback=lambda tool, args, tool_context, tool_response: agent_saw.append(tool.name))
    stretto = Returns(flow=shop_flow(), reads=SHOP_READS, writes=["refund"], store=tmp_path)
    later = Later()
    asyncio.run(run_app(agent, [stretto, later], ["please refund order O5"]))

    assert [name for name, _ in stretto.returned] == ["get_order", "refund"]
    assert stretto.returned[1] == ("refund", None)
    assert isinstance(stretto.returned[0][1], dict)  # the lookups were added ...
    assert later.saw == ["refund"] and agent_saw == ["refund"]  # ... which skips the later callbacks


@pytest.mark.parametrize("declared", ["declared a write", "not declared"])
def test_a_write_is_never_looked_up_even_when_the_flow_says_so(tmp_path: Path, declared: str) -> None:
    wrong = shop_flow(refund_is_read=True)  # learned with refund marked read, refunded after every order
    writes = ["refund"] if declared == "declared a write" else []

    shop = Shop()
    agent = shop_agent(shop, steps([("get_order", {"order_id": "O5"})], "done"))
    served = plugin(tmp_path / "served", flow=wrong, reads=SHOP_READS, writes=writes)
    asyncio.run(run_app(agent, [served], ["please refund order O5"]))
    assert "refund" not in shop.ran_tools()

    # the control: the same flow, told (wrongly) that refund is a read, does look it up
    control_shop = Shop()
    control = shop_agent(control_shop, steps([("get_order", {"order_id": "O5"})], "done"))
    asyncio.run(run_app(control, [plugin(tmp_path / "control", flow=wrong, reads=SHOP_READS + ["refund"],
                                         writes=[])], ["please refund order O5"]))
    assert "refund" in control_shop.ran_tools()


@pytest.mark.parametrize("reads", [["get_order"], []], ids=["only get_order declared", "nothing declared"])
def test_an_undeclared_tool_is_never_looked_up(tmp_path: Path, reads: list[str]) -> None:
    shop = Shop()
    agent = shop_agent(shop, steps(*REFUND_O5))
    asyncio.run(run_app(agent, [plugin(tmp_path, reads=reads, writes=[])], ["please refund order O5"]))

    assert shop.ran_tools() == ["get_order", "refund"]
    assert RESULT_KEY not in seen_after_first_call(agent)
    assert not [e for e in read_session(session_file(tmp_path)).events if isinstance(e, Lookup)]


class Garbage:
    def __str__(self) -> str:
        raise RuntimeError("cannot be shown")

    __repr__ = __str__


def _raise(_customer_id: str) -> Any:
    raise ConnectionError("the customer service is down")


async def _hang(_customer_id: str) -> Any:
    await asyncio.sleep(3600)


RELEASE = threading.Event()  # lets the hung worker thread finish once its test is over


def _hang_in_sync_code(_customer_id: str) -> Any:
    RELEASE.wait(60)
    return {"late": True}


@pytest.mark.parametrize("customer, sync, says", [
    (_raise, False, "ConnectionError"),
    (_hang, False, "abandoned"),
    (_hang_in_sync_code, True, "abandoned"),
    (lambda _c: Garbage(), False, "cannot be shown"),
], ids=["raises", "hangs", "hangs in sync code", "returns garbage"])
def test_a_failed_lookup_leaves_the_agents_result_unchanged_and_is_recorded_as_failed(
        tmp_path: Path, customer: Any, sync: bool, says: str) -> None:
    shop = Shop(customer=customer, sync=sync)
    agent = shop_agent(shop, steps(*REFUND_O5))
    RELEASE.clear()
    try:
        asyncio.run(run_app(agent, [plugin(tmp_path, lookup_timeout=0.3)], ["please refund order O5"]))
    finally:
        RELEASE.set()

    seen = seen_after_first_call(agent)
    assert {k: v for k, v in seen.items() if k != RESULT_KEY} == {
        "order_id": "O5", "customer_id": "C5", "status": "delivered"}
    assert shop.ran_tools()[-1] == "refund"  # the agent went on to its next call
    (lookup,) = [e for e in read_session(session_file(tmp_path)).events if isinstance(e, Lookup)]
    assert lookup.tool == "get_customer" and lookup.error
    assert says in lookup.content


def test_a_tool_that_asks_for_confirmation_is_never_looked_up(tmp_path: Path) -> None:
    shop = Shop(confirm_customer=True)
    agent = shop_agent(shop, steps(*REFUND_O5))
    asyncio.run(run_app(agent, [plugin(tmp_path)], ["please refund order O5"]))

    assert "get_customer" not in shop.ran_tools()
    (lookup,) = [e for e in read_session(session_file(tmp_path)).events if isinstance(e, Lookup)]
    assert lookup.error and "confirmation" in lookup.content


def test_the_session_file_holds_user_text_turns_with_usage_results_and_lookups(tmp_path: Path) -> None:
    shop = Shop()
    agent = shop_agent(shop, steps(*REFUND_O5))
    asyncio.run(run_app(agent, [plugin(tmp_path)], ["please refund order O5"]))

    session = read_session(session_file(tmp_path))
    assert session.header.harness == "google-adk"
    assert session.header.agent_model == "scripted-shop"
    assert session.header.manifest is not None and session.header.manifest.is_write("refund")
    kinds = [e.kind for e in session.events]
    assert kinds == ["user", "llm_turn", "tool_result", "lookup", "llm_turn", "tool_result", "llm_turn"]
    user, turn, result, lookup, *_ = session.events
    assert isinstance(user, UserMessage) and user.text == "please refund order O5"
    turns = [e for e in session.events if isinstance(e, LLMTurn)]
    assert all(t.usage and t.usage.input_tokens and t.usage.output_tokens == 7 for t in turns)
    assert not any(t.inferred for t in turns)
    assert turns[-1].text == "done" and not turns[-1].calls
    assert isinstance(turn, LLMTurn) and isinstance(result, ToolResult)
    assert turn.calls[0].call_id == result.call_id and result.tool == "get_order"
    assert json.loads(result.content) == {"order_id": "O5", "customer_id": "C5", "status": "delivered"}
    assert result.appended and "get_customer" in result.appended
    assert isinstance(lookup, Lookup) and lookup.after_call_id == result.call_id
    assert json.loads(lookup.content) == {"customer_id": "C5", "tier": "gold"}


def test_parallel_calls_of_one_turn_each_get_their_own_lookups(tmp_path: Path) -> None:
    shop = Shop()
    agent = shop_agent(shop, steps([("get_order", {"order_id": "O3"}), ("get_order", {"order_id": "O4"})], "done"))
    asyncio.run(run_app(agent, [plugin(tmp_path)], ["refund orders O3 and O4"]))

    responses = function_responses(agent.model.requests[1])
    assert [r.response["order_id"] for r in responses] == ["O3", "O4"]
    assert 'get_customer {"customer_id": "C3"}' in responses[0].response[RESULT_KEY]
    assert 'get_customer {"customer_id": "C4"}' in responses[1].response[RESULT_KEY]
    session = read_session(session_file(tmp_path))
    (turn, _) = [e for e in session.events if isinstance(e, LLMTurn)]
    results = [e for e in session.events if isinstance(e, ToolResult)]
    assert sorted(c.call_id for c in turn.calls) == sorted(r.call_id for r in results)
    assert sorted(e.arguments["customer_id"] for e in session.events if isinstance(e, Lookup)) == ["C3", "C4"]


def test_one_live_session_spans_the_runs_of_an_adk_session(tmp_path: Path) -> None:
    shop = Shop()
    agent = shop_agent(shop, steps([("get_order", {"order_id": "O5"})], "which one?",
                                   [("refund", {"order_id": "O5"})], "done"))
    served = plugin(tmp_path)

    async def two_runs() -> tuple[int, int]:
        runner = await run_app(agent, [served], ["please refund order O5", "yes, that one"], close=False)
        open_before = len(served.sessions)
        await runner.close()
        return open_before, len(served.sessions)

    assert asyncio.run(two_runs()) == (1, 0)
    session = read_session(session_file(tmp_path))
    assert [e.text for e in session.events if isinstance(e, UserMessage)] == ["please refund order O5", "yes, that one"]
    assert len([e for e in session.events if isinstance(e, LLMTurn)]) == 4


def test_end_session_closes_and_forgets_the_live_session(tmp_path: Path) -> None:
    served = plugin(tmp_path)

    async def run() -> tuple[int, bool, bool]:
        runner = await run_app(shop_agent(Shop(), steps("hello")), [served], ["hi"], close=False)
        before = len(served.sessions)
        ended, again = served.end_session("s1"), served.end_session("s1")
        await runner.close()
        return before, ended, again

    assert asyncio.run(run()) == (1, True, False)
    assert len(served.sessions) == 0


class AnswersErrors(BasePlugin):
    def __init__(self) -> None:
        super().__init__(name="answers_errors")

    async def on_tool_error_callback(self, *, error: Exception, **_: Any) -> dict[str, Any]:
        return {"error": f"handled: {error}"}


def test_a_tool_error_another_plugin_answers_is_recorded_as_a_failed_result(tmp_path: Path) -> None:
    shop = Shop(customer=_raise)
    agent = shop_agent(shop, steps([("get_customer", {"customer_id": "C5"})], "sorry"))
    asyncio.run(run_app(agent, [plugin(tmp_path), AnswersErrors()], ["who is C5?"]))

    (result,) = [e for e in read_session(session_file(tmp_path)).events if isinstance(e, ToolResult)]
    assert result.tool == "get_customer" and result.error and "handled" in result.content


def test_a_ready_stretto_and_flow_options_are_not_mixed(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        StrettoPlugin(flow=shop_flow(), stretto=Stretto(store=False))
    assert StrettoPlugin(stretto=Stretto(store=False)).name == "stretto"


def test_parallel_calls_get_their_lookups_when_each_run_has_its_own_event_loop(tmp_path: Path) -> None:
    """ADK's sync `Runner.run` starts a new event loop per message; the live session outlives them."""
    from google.adk.apps import App
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    agent = shop_agent(Shop(), steps([("get_order", {"order_id": "O3"}), ("get_order", {"order_id": "O4"})], "next?",
                                     [("get_order", {"order_id": "O5"}), ("get_order", {"order_id": "O6"})], "done"))
    runner = InMemoryRunner(app=App(name="shop", root_agent=agent, plugins=[plugin(tmp_path)]))
    asyncio.run(runner.session_service.create_session(app_name="shop", user_id="u", session_id="s1"))
    for text in ["refund O3 and O4", "and O5 and O6"]:
        for _ in runner.run(user_id="u", session_id="s1",
                            new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            pass

    session = read_session(session_file(tmp_path))
    assert len([e for e in session.events if isinstance(e, ToolResult)]) == 4
    looked_up = sorted(e.arguments["customer_id"] for e in session.events if isinstance(e, Lookup))
    assert looked_up == ["C3", "C4", "C5", "C6"]
