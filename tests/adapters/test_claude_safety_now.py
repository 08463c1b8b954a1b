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

pytest.importorskip("claude_agent_sdk")

from mcp.server import Server  # noqa: E402
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool, ToolAnnotations  # noqa: E402

from stretto_claude import claude_hooks  # noqa: E402
from stretto_core.serve.speculator import Guard  # noqa: E402

from safety_now import assert_exercised, now_property  # noqa: E402
from test_claude_safety_property import TOOLS, Tools  # noqa: E402

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


def run_case(tools: Tools, flow: Any, theta: float, served: list, change: tuple) -> list[tuple[str, str]]:
    lookups: list[tuple[str, str]] = []
    hooks = claude_hooks(flow, mcp_servers={"gen": server(tools, lookups)}, reads=tools.reads,
                         writes=tools.writes, store=False, theta=theta)
    asyncio.run(serve(hooks, tools, served, change))
    return lookups


def test_through_the_claude_hooks_stretto_only_ever_calls_known_reads_now() -> None:
    made: list[int] = []
    changed: list[int] = []
    now_property(run_case, made, changed, examples=80)()
    assert_exercised(made, changed, least=60)


def test_the_property_catches_a_guard_that_permits_every_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Guard, "permits", lambda self, tool: True)
    with pytest.raises(AssertionError, match="looked up"):
        now_property(run_case, [], [], examples=60, expect_failure=True)()
