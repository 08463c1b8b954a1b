"""The OpenAI Agents adapter on the toy shop, with the SDK's own scripted model.

Each test runs the real `Runner` over an agent made by `instrument(...)` and checks what the
model received on its next call (`ScriptedModel.calls[i].input`) and which calls the shop served.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from openai_support import (READS, WRITES, Shop, order_then_done, output_text, outputs_seen, scripted_agent,
                            shop_flow)

from agents import AgentHooks, Runner
from agents.testing import ModelStep, assistant_message, function_call
from agents.usage import Usage as SdkUsage
from stretto_core import ToolManifest, read_session
from stretto_openai_agents import StrettoOptions, instrument, runtime_of

CUSTOMER_C5 = '{"customer_id": "C5", "tier": "gold"}'
ORDER_O5 = '{"order_id": "O5", "customer_id": "C5", "status": "shipped"}'


def run(agent: Any, text: str = "Please refund order O5.", **kwargs: Any) -> Any:
    return asyncio.run(Runner.run(agent, text, **kwargs))


def served(shop: Shop, steps: list[Any], tmp_path: Any, tools: list[Any] | None = None, **options: Any) -> Any:
    options.setdefault("flow", shop_flow())
    options.setdefault("reads", READS)
    options.setdefault("writes", WRITES)
    agent, model = scripted_agent(tools or shop.tools(), steps)
    return instrument(agent, store=tmp_path, **options), model


def test_the_appended_lookup_reaches_what_the_model_sees_next(tmp_path: Any) -> None:
    shop = Shop()
    agent, model = served(shop, order_then_done(), tmp_path)
    run(agent)
    seen = outputs_seen(model, 1)["call-1"]
    assert seen.startswith(ORDER_O5)
    assert 'get_customer {"customer_id": "C5"}:\n' + CUSTOMER_C5 in seen
    assert shop.names() == ["get_order", "get_customer"]


def test_the_original_agent_is_left_unserved(tmp_path: Any) -> None:
    shop = Shop()
    original, model = scripted_agent(shop.tools(), order_then_done())
    instrument(original, flow=shop_flow(), reads=READS, store=tmp_path)
    run(original)
    assert outputs_seen(model, 1)["call-1"] == ORDER_O5
    assert shop.names() == ["get_order"]


def test_nothing_is_appended_when_the_flow_decides_nothing(tmp_path: Any) -> None:
    shop = Shop()
    steps = [[function_call("get_customer", {"customer_id": "C5"}, call_id="call-1")], [assistant_message("Ok.")]]
    agent, model = served(shop, steps, tmp_path)
    run(agent)
    assert outputs_seen(model, 1)["call-1"] == CUSTOMER_C5
    assert shop.names() == ["get_customer"]


def test_a_write_is_never_looked_up_even_when_the_flow_says_so(tmp_path: Any) -> None:
    # A flow that learned `refund` as a read (its sessions' manifest said so) and predicts it after get_order.
    flow = shop_flow(then="refund", manifest=ToolManifest.declare(reads=["get_order", "refund"]))
    shop = Shop()
    agent, model = served(shop, order_then_done(), tmp_path, flow=flow, reads=["get_order", "refund"],
                          writes=["refund"])
    run(agent)
    assert shop.names() == ["get_order"]
    assert outputs_seen(model, 1)["call-1"] == ORDER_O5
    # The same flow with refund declared a read does look it up: the check above can fail.
    shop2 = Shop()
    agent2, _ = served(shop2, order_then_done(), tmp_path, flow=flow, reads=["get_order", "refund"], writes=[])
    run(agent2)
    assert shop2.names() == ["get_order", "refund"]


def test_a_tool_not_declared_read_is_never_looked_up(tmp_path: Any) -> None:
    shop = Shop()
    agent, model = served(shop, order_then_done(), tmp_path, reads=["get_order"])
    run(agent)
    assert shop.names() == ["get_order"]
    assert outputs_seen(model, 1)["call-1"] == ORDER_O5


def test_a_flow_alone_never_makes_a_tool_a_read(tmp_path: Any) -> None:
    shop = Shop()
    agent, model = served(shop, order_then_done(), tmp_path, reads=[], writes=[])
    run(agent)
    assert shop.names() == ["get_order"]


def test_a_read_that_needs_approval_is_never_looked_up(tmp_path: Any) -> None:
    shop = Shop()
    tools = shop.tools()
    tools[1] = shop.tool("get_customer", CUSTOMER_C5, needs_approval=True)
    agent, _ = served(shop, order_then_done(), tmp_path, tools=tools)
    run(agent)
    assert shop.names() == ["get_order"]


def test_a_read_disabled_for_the_run_is_never_called(tmp_path: Any) -> None:
    shop = Shop()
    tools = shop.tools()
    tools[1] = shop.tool("get_customer", CUSTOMER_C5, is_enabled=lambda ctx, agent: ctx.context != "no-customers")
    agent, model = served(shop, order_then_done(), tmp_path, tools=tools)
    run(agent, context="no-customers")
    assert shop.names() == ["get_order"]
    assert outputs_seen(model, 1)["call-1"].startswith(ORDER_O5)


def failing_customer(shop: Shop, behaviour: str) -> Any:
    async def on_invoke_tool(ctx: Any, input: str) -> Any:
        shop.calls.append(("get_customer", json.loads(input)))
        if behaviour == "raises":
            raise RuntimeError("the customer service is down")
        await asyncio.sleep(3600)

    tool = shop.tool("get_customer", CUSTOMER_C5)
    tool.on_invoke_tool = on_invoke_tool
    return tool


@pytest.mark.parametrize("behaviour", ["raises", "hangs"])
def test_a_lookup_that_fails_leaves_the_agents_result_unchanged_and_is_recorded_failed(tmp_path: Any,
                                                                                       behaviour: str) -> None:
    shop = Shop()
    tools = shop.tools()
    tools[1] = failing_customer(shop, behaviour)
    agent, model = served(shop, order_then_done(), tmp_path, tools=tools, lookup_timeout=0.2, call_budget=0.5)
    run(agent)
    seen = outputs_seen(model, 1)["call-1"]
    assert seen == ORDER_O5  # a lookup stretto gave up on is never shown to the agent
    [lookup] = runtime_of(agent).sessions[-1].lookups
    assert lookup.tool == "get_customer" and lookup.error and lookup.abandoned
    assert ("took longer" in lookup.content) == (behaviour == "hangs")


def test_a_hanging_lookup_never_pushes_the_call_past_the_tools_own_timeout(tmp_path: Any) -> None:
    shop = Shop()
    tools = shop.tools()
    tools[0] = shop.tool("get_order", ORDER_O5, timeout_seconds=0.5)
    tools[1] = failing_customer(shop, "hangs")
    agent, model = served(shop, order_then_done(), tmp_path, tools=tools)  # lookup_timeout stays 5 s
    run(agent)
    seen = outputs_seen(model, 1)["call-1"]
    assert seen.startswith(ORDER_O5), seen  # not the SDK's "timed out" message
    assert runtime_of(agent).sessions[-1].lookups[0].error


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("no text")


@pytest.mark.parametrize("garbage", [None, b"\xff\x00binary", {"customer_id": "C5", "nested": [{"a": [1, None]}]},
                                     [[["deep"]]], Unprintable()])
def test_a_lookup_returning_garbage_leaves_the_agents_result_unchanged(tmp_path: Any, garbage: Any) -> None:
    shop = Shop()
    tools = shop.tools()
    tools[1] = shop.tool("get_customer", lambda a: garbage)
    agent, model = served(shop, order_then_done(), tmp_path, tools=tools)
    run(agent)
    seen = outputs_seen(model, 1)["call-1"]
    [lookup] = runtime_of(agent).sessions[-1].lookups
    assert lookup.error == isinstance(garbage, (type(None), bytes, Unprintable))
    assert seen.startswith(ORDER_O5 + "\n[stretto ") if not lookup.abandoned else seen == ORDER_O5


def test_parallel_calls_of_one_turn_each_carry_their_own_lookups(tmp_path: Any) -> None:
    shop = Shop()
    steps = [[function_call("get_order", {"order_id": "O5"}, call_id="call-1"),
              function_call("get_order", {"order_id": "O6"}, call_id="call-2"),
              function_call("get_order", {"order_id": "O7"}, call_id="call-3")], [assistant_message("Done.")]]
    agent, model = served(shop, steps, tmp_path)
    run(agent)
    seen = outputs_seen(model, 1)
    for n, call in ((5, "call-1"), (6, "call-2"), (7, "call-3")):
        assert f'get_customer {{"customer_id": "C{n}"}}:' in seen[call]
    assert sorted(a["customer_id"] for t, a in shop.calls if t == "get_customer") == ["C5", "C6", "C7"]


def test_structured_outputs_get_the_appendix_as_one_more_text_part(tmp_path: Any) -> None:
    from agents import ToolOutputText

    shop = Shop()
    tools = shop.tools()
    tools[0] = shop.tool("get_order", lambda a: ToolOutputText(text=ORDER_O5))
    agent, model = served(shop, order_then_done(), tmp_path, tools=tools)
    run(agent)
    parts = outputs_seen(model, 1)["call-1"]
    assert [p["type"] for p in parts] == ["input_text", "input_text"]
    assert parts[0]["text"] == ORDER_O5 and CUSTOMER_C5 in parts[1]["text"]


def test_the_recorded_session_holds_what_the_agent_saw(tmp_path: Any) -> None:
    shop = Shop()
    usage = SdkUsage(requests=1, input_tokens=321, output_tokens=12, total_tokens=333)
    steps = [ModelStep(output=[function_call("get_order", {"order_id": "O5"}, call_id="call-1")], usage=usage),
             ModelStep(output=[function_call("get_customer", {"customer_id": "C5"}, call_id="call-2")], usage=usage),
             ModelStep(output=[assistant_message("Your order is on its way.")], usage=usage)]
    agent, _ = served(shop, steps, tmp_path)
    run(agent, "Where is order O5?")
    session = read_session(runtime_of(agent).sessions[-1].recorder.path)
    assert session.header.harness == "openai-agents"
    assert session.header.agent_model == "ScriptedModel"
    kinds = [e.kind for e in session.events]
    assert kinds == ["user", "llm_turn", "tool_result", "lookup", "llm_turn", "tool_result", "llm_turn"]
    user, turn1, order, lookup, turn2, customer, reply = session.events
    assert user.text == "Where is order O5?"
    assert [c.tool for c in turn1.calls] == ["get_order"] and turn1.usage.input_tokens == 321
    assert reply.text == "Your order is on its way." and reply.usage.output_tokens == 12
    assert order.content == ORDER_O5 and CUSTOMER_C5 in order.appended
    assert lookup.tool == "get_customer" and lookup.score > 0.5 and lookup.after_call_id == "call-1"
    assert customer.repeats == lookup.call_id  # the agent made the same call itself


def test_a_model_named_in_the_options_is_the_one_recorded(tmp_path: Any) -> None:
    """A `RunConfig(model=...)` is invisible to hooks: the option names the model instead."""
    shop = Shop()
    agent, _ = served(shop, order_then_done(), tmp_path, agent_model="gpt-4.1-mini")
    run(agent, "Where is order O5?")
    session = read_session(runtime_of(agent).sessions[-1].recorder.path)
    assert session.header.agent_model == "gpt-4.1-mini"


@pytest.mark.parametrize("bad", ["", "  ", 3])
def test_an_empty_or_non_text_model_name_is_refused_naming_the_field(bad: Any) -> None:
    with pytest.raises(ValueError, match="agent_model"):
        StrettoOptions(agent_model=bad)


def test_runs_of_one_conversation_share_one_session_when_a_session_key_names_it(tmp_path: Any) -> None:
    shop = Shop()
    steps = order_then_done() + [[assistant_message("Anything else?")]]
    agent, model = served(shop, steps, tmp_path, session_key="thread")
    run(agent, "Where is O5?", context={"thread": "t-42"})
    run(agent, "Thanks!", context={"thread": "t-42"})
    files = sorted(tmp_path.glob("*.jsonl"))
    assert [f.name for f in files] == ["t-42.jsonl"]
    users = [e.text for e in read_session(files[0]).events if e.kind == "user"]
    assert users == ["Where is O5?", "Thanks!"]


def test_without_a_session_key_each_run_is_a_session_of_its_own(tmp_path: Any) -> None:
    shop = Shop()
    agent, _ = served(shop, order_then_done() + [[assistant_message("Anything else?")]], tmp_path)
    run(agent, "Where is O5?")
    run(agent, "Thanks!")
    assert len(list(tmp_path.glob("*.jsonl"))) == 2


def test_the_agents_own_hooks_still_hear_every_event(tmp_path: Any) -> None:
    heard: list[str] = []

    class Mine(AgentHooks[Any]):
        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            heard.append("llm_end")

        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
            heard.append(f"tool_end {tool.name}")

    shop = Shop()
    agent, model = scripted_agent(shop.tools(), order_then_done(), hooks=Mine())
    agent = instrument(agent, flow=shop_flow(), reads=READS, store=tmp_path)
    run(agent)
    assert heard == ["llm_end", "tool_end get_order", "llm_end"]


def test_options_are_checked_once_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="theta"):
        StrettoOptions(theta=2.0)
    with pytest.raises(ValueError, match="lookup_timeout"):
        StrettoOptions(lookup_timeout=0)
    assert StrettoOptions(reads=["get_order"]).reads == ("get_order",)
    with pytest.raises(ValueError, match=r"not one string: write reads=\['get_order'\]"):
        StrettoOptions(reads="get_order")
    with pytest.raises(ValueError, match="either"):
        instrument(scripted_agent([], [])[0], options=StrettoOptions(), reads=READS)


def test_options_given_as_one_object_serve_the_same(tmp_path: Any) -> None:
    shop = Shop()
    agent, model = scripted_agent(shop.tools(), order_then_done())
    agent = StrettoOptions(flow=shop_flow(), reads=READS, writes=WRITES, store=tmp_path).instrument(agent)
    run(agent)
    assert shop.names() == ["get_order", "get_customer"]


def test_an_agent_is_instrumented_once(tmp_path: Any) -> None:
    shop = Shop()
    agent, _ = served(shop, order_then_done(), tmp_path)
    with pytest.raises(ValueError, match="already instrumented"):
        instrument(agent, flow=shop_flow(), reads=READS)


def test_a_result_stretto_cannot_append_to_is_recorded_without_lookups(tmp_path: Any) -> None:
    shop = Shop()
    tools = shop.tools()
    tools[0] = shop.tool("get_order", ORDER_O5, needs_approval=False, output_json_schema={
        "type": "object", "properties": {"order_id": {"type": "string"}}})
    agent, model = served(shop, order_then_done(), tmp_path, tools=tools)
    run(agent)
    session = read_session(runtime_of(agent).sessions[-1].recorder.path)
    [result] = [e for e in session.events if e.kind == "tool_result"]
    assert result.tool == "get_order" and result.appended is None
    assert shop.names() == ["get_order"]
    assert output_text(outputs_seen(model, 1)["call-1"]).startswith("{")


def test_a_streamed_run_is_served_and_recorded_the_same(tmp_path: Any) -> None:
    shop = Shop()
    agent, model = served(shop, order_then_done(), tmp_path)

    async def streamed() -> None:
        result = Runner.run_streamed(agent, "Please refund order O5.")
        async for _ in result.stream_events():
            pass

    asyncio.run(streamed())
    assert 'get_customer {"customer_id": "C5"}:' in outputs_seen(model, 1)["call-1"]
    session = read_session(runtime_of(agent).sessions[-1].recorder.path)
    assert [e.kind for e in session.events] == ["user", "llm_turn", "tool_result", "lookup", "llm_turn"]


def test_a_tool_whose_result_is_the_final_output_carries_no_appendix(tmp_path: Any) -> None:
    shop = Shop()
    agent, model = scripted_agent(shop.tools(), order_then_done(), tool_use_behavior={"stop_at_tool_names": ["get_order"]})
    agent = instrument(agent, flow=shop_flow(), reads=READS, store=tmp_path)
    result = run(agent)
    assert result.final_output == ORDER_O5
    assert shop.names() == ["get_order"]


def test_a_conversation_spanning_event_loops_keeps_serving_parallel_calls(tmp_path: Any) -> None:
    # Each run on an event loop of its own (asyncio.run per request); the session outlives them.
    shop = Shop()
    turn = [function_call("get_order", {"order_id": "O5"}, call_id="call-1"),
            function_call("get_order", {"order_id": "O6"}, call_id="call-2")]
    again = [function_call("get_order", {"order_id": "O7"}, call_id="call-3"),
             function_call("get_order", {"order_id": "O8"}, call_id="call-4")]
    agent, model = served(shop, [turn, [assistant_message("Done.")], again, [assistant_message("Done.")]], tmp_path,
                          session_key="thread")
    run(agent, "Refund O5 and O6.", context={"thread": "t-1"})
    run(agent, "And O7 and O8.", context={"thread": "t-1"})
    first, second = outputs_seen(model, 1), outputs_seen(model, 3)
    assert all("get_customer" in first[c] for c in ("call-1", "call-2"))
    assert all("get_customer" in second[c] for c in ("call-3", "call-4"))


def test_reads_can_come_from_a_manifest_file(tmp_path: Any) -> None:
    manifest = tmp_path / "shop.manifest.json"
    manifest.write_text(json.dumps({"app": "shop", "tools": {"get_order": "read", "get_customer": "read",
                                                             "refund": "write"}}))
    shop = Shop()
    agent, model = served(shop, order_then_done(), tmp_path / "sessions", reads=[], writes=[], manifest=manifest)
    run(agent)
    assert shop.names() == ["get_order", "get_customer"]


def test_reads_can_come_from_a_function_tools_mcp_annotations(tmp_path: Any) -> None:
    from mcp.types import ToolAnnotations

    shop = Shop()
    tools = shop.tools()
    for tool in tools[:2]:
        tool._mcp_annotations = ToolAnnotations(read_only_hint=True)  # as MCPUtil.to_function_tool sets it
    agent, model = served(shop, order_then_done(), tmp_path, tools=tools, reads=[], writes=[])
    run(agent)
    assert shop.names() == ["get_order", "get_customer"]
