"""The Claude adapter's parts without the CLI: names, output shapes, stream turns, hooks called directly."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from claude_shop import Shop, customer_json, flow_then, order_json, shop_server
from stretto_claude import claude_hooks, exposed_name
from stretto_claude.names import ToolNames
from stretto_claude.shapes import augmented_output
from stretto_claude.turns import StreamTurns

pytest.importorskip("claude_agent_sdk")

APPENDIX = "\n[stretto 0a1b2c3d] looked up\n[stretto 0a1b2c3d] end"


# -- names ---------------------------------------------------------------------------------------
def test_an_exposed_name_turns_unsafe_characters_into_underscores_as_claude_code_does() -> None:
    assert exposed_name("my shop.v2", "get.order-x") == "mcp__my_shop_v2__get_order-x"


def test_sessions_record_bare_names_and_a_shared_name_stays_as_the_model_saw_it() -> None:
    names = ToolNames.build(["shop", "crm", "files"], {"shop": ["get_order", "lookup"], "crm": ["lookup"]})
    assert names.bare("mcp__shop__get_order") == "get_order"
    assert names.route("get_order").server == "shop"
    assert names.bare("mcp__crm__lookup") == "mcp__crm__lookup" and names.route("lookup") is None
    assert names.bare("mcp__files__read_file") == "read_file" and names.route("read_file") is None
    assert names.bare("Bash") == "Bash"
    assert names.callable() == ["get_order"]


# -- output shapes -------------------------------------------------------------------------------
def test_an_mcp_result_gets_the_appendix_as_one_more_text_block() -> None:
    blocks = [{"type": "text", "text": "own result"}]
    out = augmented_output(blocks, APPENDIX, mcp=True)["hookSpecificOutput"]
    assert out["updatedMCPToolOutput"] == blocks + [{"type": "text", "text": APPENDIX.lstrip("\n")}]
    assert blocks == [{"type": "text", "text": "own result"}]


def test_bash_keeps_its_output_shape_with_the_appendix_at_the_end_of_stdout() -> None:
    bash = {"stdout": "hi", "stderr": "", "interrupted": False, "isImage": False}
    out = augmented_output(bash, APPENDIX, mcp=False)["hookSpecificOutput"]["updatedToolOutput"]
    assert out == {**bash, "stdout": "hi" + APPENDIX}


def test_a_string_result_is_extended_and_a_shape_without_room_gets_additional_context() -> None:
    assert augmented_output("own", APPENDIX, mcp=False)["hookSpecificOutput"]["updatedToolOutput"] == "own" + APPENDIX
    odd = augmented_output({"filePath": "/x", "numLines": 3}, APPENDIX, mcp=False)["hookSpecificOutput"]
    assert odd == {"hookEventName": "PostToolUse", "additionalContext": APPENDIX.lstrip("\n")}


def test_nothing_to_append_changes_nothing() -> None:
    assert augmented_output([{"type": "text", "text": "x"}], "", mcp=True) == {}


# -- turns from the message stream ---------------------------------------------------------------
def test_blocks_of_one_message_make_one_turn_and_a_subagents_turns_are_not_ours() -> None:
    from claude_agent_sdk import AssistantMessage, TextBlock, ToolUseBlock

    turns = StreamTurns()
    common = {"model": "m", "session_id": "s", "message_id": "msg1", "usage": {"input_tokens": 7,
                                                                            "cache_read_input_tokens": 3}}
    turns.observe(AssistantMessage(content=[TextBlock("Looking.")], **common))
    turns.observe(AssistantMessage(content=[ToolUseBlock("t1", "mcp__shop__get_order", {"order_id": "O1"})], **common))
    turns.observe(AssistantMessage(content=[ToolUseBlock("t2", "mcp__shop__get_order", {"order_id": "O2"})], **common))
    turns.observe(AssistantMessage(content=[ToolUseBlock("t9", "Read", {})], parent_tool_use_id="task1",
                                   **{**common, "message_id": "sub"}))
    turn = turns.take_for_call("s", "t2")
    assert turn is not None and turn.text == ["Looking."] and [c.call_id for c in turn.calls] == ["t1", "t2"]
    assert turn.input_tokens == 10
    assert turns.take_for_call("s", "t1") is None and turns.take_for_call("s", "t9") is None


# -- the hooks called directly -------------------------------------------------------------------
BASE = {"session_id": "s1", "transcript_path": "", "cwd": "/"}


async def after_get_order(hooks: Any, order: str = "O7", name: str = "mcp__shop__get_order",
                          response: Any = None) -> dict[str, Any]:
    data = {**BASE, "hook_event_name": "PostToolUse", "tool_name": name, "tool_input": {"order_id": order},
            "tool_response": response if response is not None else [{"type": "text", "text": order_json(order)}],
            "tool_use_id": "toolu_1"}
    try:
        return await hooks["PostToolUse"][0].hooks[0](data, "toolu_1", {})
    finally:
        await hooks.aclose()


def test_an_unhinted_tool_is_looked_up_once_the_operator_declares_it_read(tmp_path: Path) -> None:
    shop = Shop()
    hooks = claude_hooks(flow_then("get_notes"), mcp_servers={"shop": shop_server(shop)}, store=tmp_path,
                         reads=["get_notes"])
    out = asyncio.run(after_get_order(hooks))
    assert shop.called("get_notes") == [{"customer_id": "C7"}]
    assert "get_notes" in out["hookSpecificOutput"]["updatedMCPToolOutput"][1]["text"]


def test_a_tool_the_server_marks_read_is_not_looked_up_when_the_operator_declares_it_a_write(tmp_path: Path) -> None:
    shop = Shop()
    hooks = claude_hooks(flow_then("get_customer"), mcp_servers={"shop": shop_server(shop)}, store=tmp_path,
                         writes=["get_customer"])
    assert asyncio.run(after_get_order(hooks)) == {}
    assert shop.called("get_customer") == []


def test_a_declared_read_no_in_process_server_serves_is_never_looked_up(tmp_path: Path) -> None:
    hooks = claude_hooks(flow_then("get_customer"), mcp_servers={"crm": {"type": "stdio", "command": "crm"}},
                         store=tmp_path, reads=["get_order", "get_customer"])
    assert asyncio.run(after_get_order(hooks, name="mcp__crm__get_order")) == {}
    live = hooks.sessions["s1"]
    assert not live.tools.is_read("get_customer") and live.lookups == []


def test_a_tool_with_bashs_output_shape_gets_the_appendix_at_the_end_of_stdout(tmp_path: Path) -> None:
    shop = Shop()
    hooks = claude_hooks(flow_then("get_customer"), mcp_servers={"shop": shop_server(shop)}, store=tmp_path)
    bash = {"stdout": order_json("O7"), "stderr": "", "interrupted": False, "isImage": False}
    out = asyncio.run(after_get_order(hooks, name="get_order", response=bash))
    stdout = out["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
    assert stdout.startswith(order_json("O7")) and customer_json("C7") in stdout


def test_a_hook_whose_servers_cannot_be_listed_answers_nothing_and_the_call_stands(tmp_path: Path) -> None:
    hooks = claude_hooks(flow_then("get_customer"), mcp_servers={"shop": {"type": "sdk", "instance": object()}},
                         store=tmp_path, reads=["get_order", "get_customer"])
    assert asyncio.run(after_get_order(hooks)) == {}
    assert hooks.lookups == []


def test_a_failed_call_is_recorded_as_an_error_and_its_lookups_come_as_context(tmp_path: Path) -> None:
    shop = Shop()
    hooks = claude_hooks(flow_then("get_customer"), mcp_servers={"shop": shop_server(shop)}, store=tmp_path)
    data = {**BASE, "hook_event_name": "PostToolUseFailure", "tool_name": "mcp__shop__get_order",
            "tool_input": {"order_id": "O7"}, "tool_use_id": "toolu_1", "error": "Error: order O7 is archived"}

    async def fail() -> dict[str, Any]:
        try:
            return await hooks["PostToolUseFailure"][0].hooks[0](data, "toolu_1", {})
        finally:
            await hooks.aclose()

    out = asyncio.run(fail())
    assert set(out.get("hookSpecificOutput", {"hookEventName": "PostToolUseFailure"})) <= {
        "hookEventName", "additionalContext"}
    hooks.close()
    lines = [json.loads(line) for line in next(tmp_path.glob("*.jsonl")).read_text().splitlines()]
    results = [e for e in lines if e.get("kind") == "tool_result"]
    assert results == [{**results[0], "tool": "get_order", "content": "Error: order O7 is archived", "error": True}]


def test_a_session_that_outlives_its_event_loop_still_gets_its_lookups(tmp_path: Path) -> None:
    shop = Shop()
    hooks = claude_hooks(flow_then("get_customer"), mcp_servers={"shop": shop_server(shop)}, store=tmp_path)
    post = hooks["PostToolUse"][0].hooks[0]

    async def parallel_turn(orders: list[str]) -> None:  # one turn's calls, their hooks at once
        calls = [{**BASE, "hook_event_name": "PostToolUse", "tool_name": "mcp__shop__get_order",
                  "tool_input": {"order_id": o}, "tool_response": [{"type": "text", "text": order_json(o)}],
                  "tool_use_id": f"toolu_{o}"} for o in orders]
        await asyncio.gather(*(post(c, c["tool_use_id"], {}) for c in calls))

    asyncio.run(parallel_turn(["O1", "O2"]))   # e.g. `asyncio.run(...)` per user turn, with resume=
    asyncio.run(parallel_turn(["O3", "O4"]))
    assert [args["customer_id"] for args in shop.called("get_customer")] == ["C1", "C2", "C3", "C4"]
