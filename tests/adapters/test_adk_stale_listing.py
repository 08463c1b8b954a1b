"""The ADK plugin decides on the listing as it is now (issue 26, item 3): a toolset re-annotates
`get_customer` destructive mid-session (as an MCP server does before `list_changed`); stretto
never looks it up after that. The toolset is ADK's `BaseToolset` whose tools carry MCP
annotations the way `McpTool` does (`raw_mcp_tool`), so nothing of the plugin is bypassed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool
from google.adk.tools.base_toolset import BaseToolset
from mcp.types import Tool, ToolAnnotations

from adk_support import ScriptedLlm, run_app, steps
from claude_shop import customer_json, flow_then, order_json
from stretto_adk import StrettoPlugin


class Shared(dict):
    """State every copy of the toolset shares (ADK copies the agent per run), as a server's would."""

    def __deepcopy__(self, memo: dict) -> "Shared":
        return self

    def append(self, name: str) -> None:
        self.setdefault("calls", []).append(name)


class ChangingShop(BaseToolset):
    """get_order and get_customer (read-only until `turn_destructive` runs), and that write."""

    def __init__(self) -> None:
        super().__init__()
        self.state = Shared({"customer_read_only": True})
        self.calls = Shared()

    async def get_tools(self, readonly_context: Any = None) -> list[Any]:
        async def get_order(order_id: str) -> str:
            self.calls.append("get_order")
            return order_json(order_id)

        async def get_customer(customer_id: str) -> str:
            self.calls.append("get_customer")
            return customer_json(customer_id)

        async def turn_destructive() -> str:
            self.calls.append("turn_destructive")
            self.state["customer_read_only"] = False
            return "done"

        customer = ToolAnnotations(readOnlyHint=True) if self.state["customer_read_only"] else \
            ToolAnnotations(readOnlyHint=False, destructiveHint=True)
        return [annotated(get_order, {"order_id": "string"}, ToolAnnotations(readOnlyHint=True)),
                annotated(get_customer, {"customer_id": "string"}, customer),
                annotated(turn_destructive, {}, ToolAnnotations(readOnlyHint=False))]


def annotated(fn: Any, args: dict[str, str], annotations: ToolAnnotations) -> FunctionTool:
    tool = FunctionTool(fn)
    schema = {"type": "object", "properties": {k: {"type": v} for k, v in args.items()}, "required": list(args)}
    object.__setattr__(tool, "raw_mcp_tool", Tool(name=fn.__name__, inputSchema=schema, annotations=annotations))
    return tool


def serve(tmp_path: Path, change: bool) -> list[str]:
    shop = ChangingShop()
    script = [[("get_order", {"order_id": "O1"})]] + ([[("turn_destructive", {})]] if change else []) + \
             [[("get_order", {"order_id": "O2"})], "done"]
    agent = LlmAgent(name="shop", tools=[shop], model=ScriptedLlm(model="scripted-shop", brain=steps(*script)))
    plugin = StrettoPlugin(flow=flow_then("get_customer"), store=tmp_path / "sessions")
    asyncio.run(run_app(agent, [plugin], ["Where are my orders O1 and O2?"]))
    return shop.calls.get("calls", [])


def test_without_a_change_the_customer_is_looked_up_after_each_order(tmp_path: Path) -> None:
    assert serve(tmp_path, change=False) == ["get_order", "get_customer", "get_order", "get_customer"]


def test_a_tool_re_annotated_destructive_is_never_looked_up_after_the_change(tmp_path: Path) -> None:
    calls = serve(tmp_path, change=True)
    assert calls == ["get_order", "get_customer", "turn_destructive", "get_order"], calls
