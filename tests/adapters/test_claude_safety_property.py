"""Safety at the adapter: through the Claude hooks, stretto never calls a tool that is not a known read.

Over generated tool sets (each tool hinted read, write, destructive or not at all, and declared
read or write by the operator or not), generated flows (which may call anything a read) and
generated PostToolUse inputs, every call that reaches the real in-process SDK MCP server from a
lookup is of a tool that the server hints read-only and the operator does not call a write, or
that has no hint and the operator declares read. No CLI: the hook callback is called directly.
The property asserts a good share of its cases made lookups, and is shown to fail once the
engine's guard permits every tool.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from stretto_core import Session, SessionHeader, ToolCall, ToolKind, ToolManifest, learn_flow
from stretto_core.serve.speculator import Guard
from stretto_core.sessions.model import LLMTurn, ToolResult, UserMessage
from stretto_claude import claude_hooks

TOOLS = [f"tool_{i}" for i in range(5)]
HINTS = ["read", "read", "write", "destructive", "none", "none"]
VALUES = ["a1", "b22", "c333", "d4444", "e5"]


@dataclass
class Tools:
    hints: dict[str, str]
    reads: set[str]
    writes: set[str]

    def known_read(self, tool: str) -> bool:
        if tool in self.writes:
            return False
        hint = self.hints[tool]
        return hint == "read" or (hint == "none" and tool in self.reads)


@st.composite
def tool_sets(draw: Any) -> Tools:
    return Tools({t: draw(st.sampled_from(HINTS)) for t in TOOLS}, draw(st.sets(st.sampled_from(TOOLS))),
                 draw(st.sets(st.sampled_from(TOOLS), max_size=2)))


@st.composite
def walks(draw: Any, pattern: list[str]) -> list[tuple[str, str, list[str]]]:
    """Calls of `pattern`'s tools in which each argument comes from the previous result:
    (tool, argument, result items)."""
    steps, items = [], [draw(st.sampled_from(VALUES))]
    for tool in pattern:
        value = draw(st.sampled_from(items))
        items = draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=3))
        steps.append((tool, value, items))
    return steps


@st.composite
def histories(draw: Any) -> tuple[list[list[tuple[str, str, list[str]]]], list[tuple[str, str, list[str]]]]:
    """Training walks that mostly follow one habit (a sequence of tools), and a served walk of it."""
    habit = draw(st.lists(st.sampled_from(TOOLS), min_size=2, max_size=5))
    train = draw(st.lists(st.one_of(walks(habit), walks(habit),
                                    st.lists(st.sampled_from(TOOLS), min_size=1, max_size=4).flatmap(walks)),
                          min_size=2, max_size=6))
    return train, draw(walks(habit))


def as_session(walk: list[tuple[str, str, list[str]]], index: int) -> Session:
    events: list[Any] = [UserMessage(text=f"please look at {walk[0][1]}")]
    for k, (tool, value, items) in enumerate(walk):
        call = ToolCall(call_id=f"c{k}", tool=tool, arguments={"x": value})
        events += [LLMTurn(calls=[call]), ToolResult(call_id=call.call_id, tool=tool, content=json.dumps({"items": items}))]
    events.append(LLMTurn(text="done"))
    return Session(header=SessionHeader(session_id=f"train-{index}", harness="generated"), events=events)


def server(tools: Tools, called: list[str]) -> Any:
    from claude_agent_sdk import ToolAnnotations, create_sdk_mcp_server, tool

    hints = {"read": ToolAnnotations(readOnlyHint=True), "write": ToolAnnotations(readOnlyHint=False),
             "destructive": ToolAnnotations(readOnlyHint=True, destructiveHint=True), "none": None}

    def make(name: str) -> Any:
        async def handler(args: dict[str, Any]) -> dict[str, Any]:
            called.append(name)
            return {"content": [{"type": "text", "text": json.dumps({"items": [args["x"] + "0", "b22"]})}]}
        return tool(name, f"the tool {name}", {"x": str}, annotations=hints[tools.hints[name]])(handler)

    return create_sdk_mcp_server("gen", tools=[make(t) for t in TOOLS])


async def serve(hooks: Any, walk: list[tuple[str, str, list[str]]]) -> None:
    base = {"session_id": "served", "transcript_path": "", "cwd": "/"}
    await hooks["UserPromptSubmit"][0].hooks[0]({**base, "hook_event_name": "UserPromptSubmit",
                                                 "prompt": f"please look at {walk[0][1]}"}, None, {})
    for k, (tool, value, items) in enumerate(walk):
        data = {**base, "hook_event_name": "PostToolUse", "tool_name": f"mcp__gen__{tool}",
                "tool_input": {"x": value}, "tool_use_id": f"toolu_{k}",
                "tool_response": [{"type": "text", "text": json.dumps({"items": items})}]}
        await hooks["PostToolUse"][0].hooks[0](data, f"toolu_{k}", {})
    await hooks.aclose()


def claude_property(made: list[int], examples: int = 120, *, expect_failure: bool = False) -> Any:
    """The property as a runnable hypothesis test; `made` receives each case's lookup count.
    Run where it must fail, it stops at the first failing case (no shrinking, nothing saved)."""
    extra: dict[str, Any] = {"phases": (Phase.generate,), "database": None} if expect_failure else {}

    @settings(derandomize=True, max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow], **extra)
    @given(tools=tool_sets(), history=histories(),
           learned_kinds=st.dictionaries(st.sampled_from(TOOLS), st.sampled_from([ToolKind.read, ToolKind.write])),
           theta=st.sampled_from([0.0, 0.01, 0.05, 0.3]))
    def check(tools: Tools, history: tuple, learned_kinds: dict, theta: float) -> None:
        train, served = history
        learned = ToolManifest.declare(reads=[t for t in TOOLS if learned_kinds.get(t, ToolKind.read) is ToolKind.read],
                                       writes=[t for t in TOOLS if learned_kinds.get(t) is ToolKind.write])
        flow = learn_flow([as_session(w, i) for i, w in enumerate(train)], learned)
        called: list[str] = []
        hooks = claude_hooks(flow, mcp_servers={"gen": server(tools, called)}, reads=tools.reads,
                             writes=tools.writes, store=False, theta=theta)
        asyncio.run(serve(hooks, served))
        for name in called:
            assert tools.known_read(name), f"looked up {name}: hint {tools.hints[name]}, " \
                                           f"declared reads {sorted(tools.reads)}, writes {sorted(tools.writes)}"
        assert sorted(called) == sorted(lk.tool for lk in hooks.lookups)
        made.append(len(called))

    return check


def test_through_the_claude_hooks_stretto_only_ever_calls_known_reads() -> None:
    made: list[int] = []
    claude_property(made)()
    assert len(made) >= 100
    print(f"{sum(1 for n in made if n)} of {len(made)} cases made lookups, {sum(made)} in all")
    assert sum(1 for n in made if n) >= 0.25 * len(made), f"only {sum(1 for n in made if n)} of {len(made)} made lookups"


def test_the_property_catches_a_guard_that_permits_every_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Guard, "permits", lambda self, tool: True)
    with pytest.raises(AssertionError, match="looked up"):
        claude_property([], examples=60, expect_failure=True)()
