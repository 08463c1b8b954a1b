"""The runtime against an MCP server, the cascade on hand-backs, and the hand-back reasons."""

from __future__ import annotations

import asyncio

import pytest

from test_procedure_world import KINDS, Lamp, customer, training_episodes

from stretto_core.procedures.cascade import ModelTurn, ScriptedModel, run_cascade
from stretto_core.procedures.compile import compile_procedure
from stretto_core.procedures.ir import Procedure
from stretto_core.procedures.mcp import run_on_mcp
from stretto_core.procedures.runtime import run_procedure


@pytest.fixture(scope="module")
def procedure() -> Procedure:
    return compile_procedure(training_episodes(), "toy/lamp")


def lamp_server(world: Lamp):
    """An in-process MCP server whose tools are the toy world's, annotated read or not."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer("lamp")

    def tool(name: str):
        return server.tool(name=name, annotations=ToolAnnotations(read_only_hint=KINDS[name] == "read"))

    def answer(name: str, args: dict) -> str:
        content, error = world.call(name, args)
        if error:
            raise ValueError(content.removeprefix("Error: "))
        return content

    @tool("get_customer_by_phone")
    def get_customer_by_phone(phone: str) -> str:
        return answer("get_customer_by_phone", {"phone": phone})

    @tool("get_line")
    def get_line(id: str) -> str:  # noqa: A002 - the tool's own argument name
        return answer("get_line", {"id": id})

    @tool("check_lamp")
    def check_lamp() -> str:
        return answer("check_lamp", {})

    @tool("replace_fuse")
    def replace_fuse() -> str:
        return answer("replace_fuse", {})

    @tool("toggle_lamp")
    def toggle_lamp() -> str:
        return answer("toggle_lamp", {})

    @tool("resume_line")
    def resume_line(customer_id: str, line_id: str) -> str:
        return answer("resume_line", {"customer_id": customer_id, "line_id": line_id})

    @tool("transfer_to_human")
    def transfer_to_human(summary: str) -> str:
        return answer("transfer_to_human", {"summary": summary})

    return server


def test_against_an_mcp_server_the_procedure_makes_the_same_calls_as_in_process(procedure):
    local, remote = customer(90, fuse="blown", suspended=True), customer(90, fuse="blown", suspended=True)
    expected = run_procedure(procedure, local.ticket(), local)
    got = asyncio.run(run_on_mcp(procedure, remote.ticket(), lamp_server(remote)))
    assert got.verdict == expected.verdict == "resolved"
    assert [(c.tool, c.arguments) for c in got.calls] == [(c.tool, c.arguments) for c in expected.calls]
    assert [c.content for c in got.calls] == [c.content for c in expected.calls]
    assert remote.lamp_on


def test_a_run_that_resolves_costs_the_cascade_no_llm_turn(procedure):
    world = customer(91, fuse="blown")
    model = ScriptedModel([ModelTurn(calls=[("toggle_lamp", {})])])
    result = run_cascade(procedure, world.ticket(), world, model)
    assert result.verdict == "resolved" and result.llm_turns == 0 and model.seen == []


def test_on_a_hand_back_the_model_sees_the_procedures_calls_and_finishes_the_ticket(procedure):
    world = customer(92, stuck=True)
    model = ScriptedModel([ModelTurn(calls=[("check_lamp", {})]), ModelTurn(text="A technician must look at it.")])
    result = run_cascade(procedure, world.ticket(), world, model)
    assert result.run.verdict == "hand_back"
    assert result.llm_turns == 2 and [c.tool for c in result.model_calls] == ["check_lamp"]
    first_context = model.seen[0]
    assert first_context[0]["content"].startswith("Ticket: Customer phone 555-192-2092")
    procedure_calls = [m["tool_calls"][0]["name"] for m in first_context if m["role"] == "assistant"]
    assert procedure_calls == [c.tool for c in result.run.calls]
    assert "handed the ticket back" in first_context[-1]["content"]
    assert [c.tool for c in result.calls][-1] == "check_lamp"


def test_a_ticket_whose_customer_is_unknown_is_handed_back_with_the_reason(procedure):
    world = customer(93)
    ticket = "Customer phone 555-999-9999. The lamp does not light. They will consider it resolved when the lamp is on."
    result = run_procedure(procedure, ticket, world)
    assert result.verdict == "hand_back"
    assert "get_customer_by_phone (failed)" in result.reason


def test_a_run_past_its_call_budget_hands_back(procedure):
    tight = procedure.model_copy(update={"max_calls": 2})
    world = customer(94, fuse="blown")
    result = run_procedure(tight, world.ticket(), world)
    assert result.verdict == "hand_back" and "budget" in result.reason and len(result.calls) == 2


def test_a_tool_that_raises_is_an_error_result_not_a_crash(procedure):
    def broken(tool, arguments):
        raise RuntimeError("server gone")

    result = run_procedure(procedure, customer(95).ticket(), broken)
    assert result.calls[0].error and result.calls[0].content == "Error: server gone"
    assert result.verdict == "hand_back"


def test_a_stop_that_no_check_confirms_is_handed_back_not_called_resolved(procedure):
    unchecked = procedure.model_copy(update={"checks": []})
    world = customer(96, fuse="blown")
    result = run_procedure(unchecked, world.ticket(), world)
    assert world.lamp_on, "the procedure did the work"
    assert result.verdict == "hand_back" and "no check confirms" in result.reason
