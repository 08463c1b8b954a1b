"""Safety as a property of the adapter: stretto never calls a tool that is not a known read.

Over generated tool sets (each tool a read, a write or of unknown kind, its kind declared in
code or carried as MCP annotations on the `FunctionTool`) and generated flows (learned from
sessions whose manifest claims tools are reads at random, writes and unknown tools included),
the instrumented agent is run by the real `Runner` with a scripted model, and every call stretto
made on its own is checked. The property is not vacuous: a good share of the cases must make
lookups at all.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai_support import scripted_agent

from agents import FunctionTool, Runner
from agents.testing import assistant_message, function_call
from mcp.types import ToolAnnotations
from stretto_core import Session, SessionHeader, ToolCall, ToolManifest, learn_flow
from stretto_core.sessions.model import LLMTurn, ToolResult, UserMessage
from stretto_openai_agents import instrument

TOOLS = [f"tool_{i}" for i in range(5)]
KINDS = ["read", "read", "write", "unknown"]


def answer(tool: str, x: str) -> str:
    return json.dumps({"next": f"{x}{tool[-1]}", "tool": tool})


def chain_session(i: int, chain: list[str]) -> Session:
    events: list[Any] = [UserMessage(text="Please look into it.")]
    x = f"key{i:03d}"
    for n, tool in enumerate(chain):
        events.append(LLMTurn(calls=[ToolCall(call_id=f"c{n}", tool=tool, arguments={"x": x})]))
        content = answer(tool, x)
        events.append(ToolResult(call_id=f"c{n}", tool=tool, content=content, parsed=json.loads(content)))
        x = json.loads(content)["next"]
    events.append(LLMTurn(text="Done."))
    return Session(header=SessionHeader(session_id=f"gen-{i}", harness="generated"), events=events)


def toolset(kinds: dict[str, str], by_annotation: dict[str, bool], made: list[tuple[str, str]]) -> list[FunctionTool]:
    tools = []
    for name in TOOLS:
        async def on_invoke_tool(ctx: Any, input: str, name: str = name) -> str:
            made.append((name, ctx.tool_call_id))
            return answer(name, json.loads(input).get("x", ""))

        tool = FunctionTool(name=name, description=name, on_invoke_tool=on_invoke_tool, strict_json_schema=False,
                            params_json_schema={"type": "object", "properties": {"x": {"type": "string"}}})
        if by_annotation[name] and kinds[name] != "unknown":
            tool._mcp_annotations = ToolAnnotations(read_only_hint=kinds[name] == "read")
        tools.append(tool)
    return tools


def serve_case(kinds: dict[str, str], by_annotation: dict[str, bool], claimed: set[str], chain: list[str],
               served: list[str], tmp_path: Any) -> list[tuple[str, str]]:
    flow = learn_flow([chain_session(i, chain) for i in range(10)], ToolManifest.declare(reads=sorted(claimed)))
    made: list[tuple[str, str]] = []
    declared = {k: [t for t in TOOLS if kinds[t] == k and not by_annotation[t]] for k in ("read", "write")}
    steps = [[function_call(tool, {"x": f"key{500 + n:03d}" if n == 0 else "?"}, call_id=f"call-{n}")]
             for n, tool in enumerate(served)] + [[assistant_message("Done.")]]
    agent, _ = scripted_agent(toolset(kinds, by_annotation, made), steps)
    agent = instrument(agent, flow=flow, reads=declared["read"], writes=declared["write"], store=tmp_path)
    asyncio.run(Runner.run(agent, "Please look into it.", max_turns=len(steps) + 2))
    return [(tool, call_id) for tool, call_id in made if call_id.startswith("stretto-")]


CASES: list[bool] = []


@settings(derandomize=True, max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(kinds=st.fixed_dictionaries({t: st.sampled_from(KINDS) for t in TOOLS}),
       by_annotation=st.fixed_dictionaries({t: st.booleans() for t in TOOLS}),
       claimed=st.sets(st.sampled_from(TOOLS), min_size=2),
       chain=st.lists(st.sampled_from(TOOLS), min_size=2, max_size=4),
       extra=st.lists(st.sampled_from(TOOLS), max_size=2))
def check_only_known_reads_are_called(tmp_path: Any, kinds: dict[str, str], by_annotation: dict[str, bool],
                                      claimed: set[str], chain: list[str], extra: list[str]) -> None:
    lookups = serve_case(kinds, by_annotation, claimed | set(chain), chain, chain[:1] + extra, tmp_path)
    for tool, _ in lookups:
        assert kinds[tool] == "read", f"stretto called {tool}, a {kinds[tool]} tool"
    CASES.append(bool(lookups))


def test_stretto_never_calls_a_tool_that_is_not_a_known_read(tmp_path: Any) -> None:
    CASES.clear()
    check_only_known_reads_are_called(tmp_path)
    assert len(CASES) >= 30
    share = sum(CASES) / len(CASES)
    assert share > 0.3, f"only {share:.0%} of the generated cases made any lookup: the property is near vacuous"
