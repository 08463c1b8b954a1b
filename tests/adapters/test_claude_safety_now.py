"""Safety through the Claude hooks after a change: stretto never calls a tool that is not a known
read *now*. As `test_claude_safety_property`, but the in-process server is a low-level
`mcp.server.Server` whose listing follows hints that change mid-session (one tool re-annotated
between two calls); every call that reaches it is a lookup, noted with the tool's hint at that
moment. Shown to fail once the engine's guard permits every tool."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

pytest.importorskip("claude_agent_sdk")

from mcp.server import Server  # noqa: E402
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool, ToolAnnotations  # noqa: E402

from stretto_claude import claude_hooks  # noqa: E402
from stretto_core import ToolKind, ToolManifest, learn_flow  # noqa: E402
from stretto_core.serve.speculator import Guard  # noqa: E402

from test_claude_safety_property import TOOLS, Tools, as_session, histories, tool_sets  # noqa: E402

HINTS = ["read", "write", "destructive", "none"]
WIRE = {"read": ToolAnnotations(readOnlyHint=True), "write": ToolAnnotations(readOnlyHint=False),
        "destructive": ToolAnnotations(readOnlyHint=True, destructiveHint=True), "none": None}


def server(tools: Tools, lookups: list[tuple[str, str]]) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}

    async def on_list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=[Tool(name=t, inputSchema=schema, annotations=WIRE[tools.hints[t]]) for t in TOOLS])

    async def on_call_tool(ctx: Any, params: Any) -> CallToolResult:
        lookups.append((params.name, tools.hints[params.name]))
        items = [(params.arguments or {}).get("x", "") + "0", "b22"]
        return CallToolResult(content=[TextContent(type="text", text=json.dumps({"items": items}))])

    return {"type": "sdk", "name": "gen", "instance": Server("gen", on_list_tools=on_list_tools, on_call_tool=on_call_tool)}


async def serve(hooks: Any, tools: Tools, walk: list, change: tuple[int, str, str]) -> None:
    base = {"session_id": "served", "transcript_path": "", "cwd": "/"}
    await hooks.on_user_prompt({**base, "prompt": f"please look at {walk[0][1]}"}, None, {})
    for k, (tool, value, items) in enumerate(walk):
        if change[0] == k:
            tools.hints[change[1]] = change[2]
        data = {**base, "hook_event_name": "PostToolUse", "tool_name": f"mcp__gen__{tool}",
                "tool_input": {"x": value}, "tool_use_id": f"toolu_{k}",
                "tool_response": [{"type": "text", "text": json.dumps({"items": items})}]}
        await hooks.on_post_tool_use(data, f"toolu_{k}", {})
    await hooks.aclose()


def claude_now_property(made: list[int], changed: list[int], examples: int = 80, *,
                        expect_failure: bool = False) -> Any:
    extra: dict[str, Any] = {"phases": (Phase.generate,), "database": None} if expect_failure else {}

    @settings(derandomize=True, max_examples=examples, deadline=None,
              suppress_health_check=[HealthCheck.too_slow], **extra)
    @given(tools=tool_sets(), history=histories(),
           learned_kinds=st.dictionaries(st.sampled_from(TOOLS), st.sampled_from([ToolKind.read, ToolKind.write])),
           theta=st.sampled_from([0.0, 0.05, 0.3]),
           change=st.tuples(st.integers(1, 6), st.integers(0, 5), st.sampled_from(HINTS + ["write", "destructive"])))
    def check(tools: Tools, history: tuple, learned_kinds: dict, theta: float, change: Any) -> None:
        train, served = history
        change = (change[0], served[min(change[1], len(served) - 1)][0], change[2])  # a tool of the habit
        learned = ToolManifest.declare(reads=[t for t in TOOLS if learned_kinds.get(t, ToolKind.read) is ToolKind.read],
                                       writes=[t for t in TOOLS if learned_kinds.get(t) is ToolKind.write])
        flow = learn_flow([as_session(w, i) for i, w in enumerate(train)], learned)
        lookups: list[tuple[str, str]] = []
        hooks = claude_hooks(flow, mcp_servers={"gen": server(tools, lookups)}, reads=tools.reads,
                             writes=tools.writes, store=False, theta=theta)
        asyncio.run(serve(hooks, tools, served, change))
        for name, hint in lookups:
            known = name not in tools.writes and (hint == "read" or (hint == "none" and name in tools.reads))
            assert known, f"looked up {name} while hinted {hint} (reads {sorted(tools.reads)}, writes {sorted(tools.writes)})"
        made.append(len(lookups))
        changed.append(int(change[0] < len(served)))

    return check


def test_through_the_claude_hooks_stretto_only_ever_calls_known_reads_now() -> None:
    made: list[int] = []
    changed: list[int] = []
    claude_now_property(made, changed)()
    print(f"{sum(1 for n in made if n)} of {len(made)} cases made lookups, {sum(made)} in all; "
          f"{sum(changed)} re-annotated a tool mid-session")
    assert len(made) >= 60
    assert sum(1 for n in made if n) >= 0.2 * len(made)
    assert sum(changed) >= 0.2 * len(made)


def test_the_property_catches_a_guard_that_permits_every_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Guard, "permits", lambda self, tool: True)
    with pytest.raises(AssertionError, match="looked up"):
        claude_now_property([], [], examples=60, expect_failure=True)()
