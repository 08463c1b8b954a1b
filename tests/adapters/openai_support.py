"""A toy shop for the OpenAI Agents adapter's tests: tools, a learned flow, a scripted model.

The shop has two reads (`get_order`, `get_customer`), a write (`refund`) and a tool of unknown
kind (`get_notes`). The flow is learned from sessions in which the agent always looks up the
order's customer right after the order, so served live it predicts `get_customer(<the order's
customer>)` after every `get_order`.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

agents = pytest.importorskip("agents", reason="the OpenAI Agents SDK is not installed (pip install 'stretto[openai-agents]')")

from agents import Agent, FunctionTool, set_tracing_disabled  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402

from stretto_core import Flow, Session, SessionHeader, ToolCall, ToolManifest, learn_flow  # noqa: E402
from stretto_core.sessions.model import LLMTurn, ToolResult, UserMessage  # noqa: E402

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
set_tracing_disabled(True)

READS = ["get_order", "get_customer"]
WRITES = ["refund"]
SHOP_MANIFEST = ToolManifest.declare(reads=READS, writes=WRITES)


def order_of(order_id: str) -> dict[str, Any]:
    return {"order_id": order_id, "customer_id": "C" + order_id[1:], "status": "shipped"}


def customer_of(customer_id: str) -> dict[str, Any]:
    return {"customer_id": customer_id, "tier": "gold"}


def training_session(i: int, first: str = "get_order", then: str = "get_customer") -> Session:
    """One recorded episode: the order, then `then` on what it named (its customer, or itself)."""
    order = order_of(f"O{100 + i}")
    if then == "get_customer":
        args, answer = {"customer_id": order["customer_id"]}, json.dumps(customer_of(order["customer_id"]))
    else:
        args, answer = {"order_id": order["order_id"]}, "ok"
    events: list[Any] = [UserMessage(text="Please help me with my order."),
                         LLMTurn(calls=[ToolCall(call_id="a", tool=first, arguments={"order_id": order["order_id"]})]),
                         ToolResult(call_id="a", tool=first, content=json.dumps(order), parsed=order),
                         LLMTurn(calls=[ToolCall(call_id="b", tool=then, arguments=args)]),
                         ToolResult(call_id="b", tool=then, content=answer, parsed=json.loads(answer) if answer != "ok" else None),
                         LLMTurn(calls=[ToolCall(call_id="c", tool="refund", arguments={"order_id": order["order_id"]})]),
                         ToolResult(call_id="c", tool="refund", content="refunded"),
                         LLMTurn(text="Refunded.")]
    return Session(header=SessionHeader(session_id=f"train-{first}-{then}-{i}", harness="toy"), events=events)


def shop_flow(first: str = "get_order", then: str = "get_customer", manifest: ToolManifest | None = None) -> Flow:
    """A flow that predicts `then` (by default get_customer of the order's customer) after `first`."""
    return learn_flow([training_session(i, first, then) for i in range(12)], manifest or SHOP_MANIFEST)


class Shop:
    """The toy backend; counts every call it serves, lookups included."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def tool(self, name: str, answer: Any, **fields: Any) -> FunctionTool:
        shop = self

        async def on_invoke_tool(ctx: Any, input: str) -> Any:
            args = json.loads(input or "{}")
            shop.calls.append((name, args))
            return answer(args) if callable(answer) else answer

        schema = {"type": "object", "properties": {"order_id": {"type": "string"},
                                                   "customer_id": {"type": "string"}},
                  "additionalProperties": False}
        return FunctionTool(name=name, description=f"The shop's {name}.", params_json_schema=schema,
                            on_invoke_tool=on_invoke_tool, strict_json_schema=False, **fields)

    def tools(self) -> list[FunctionTool]:
        return [self.tool("get_order", lambda a: json.dumps(order_of(a["order_id"]))),
                self.tool("get_customer", lambda a: json.dumps(customer_of(a["customer_id"]))),
                self.tool("refund", "refunded"),
                self.tool("get_notes", lambda a: json.dumps({"order_id": a.get("order_id"), "notes": []}))]

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


def scripted_agent(tools: list[Any], steps: list[Any], **fields: Any) -> tuple[Agent[Any], ScriptedModel]:
    model = ScriptedModel(steps)
    return Agent(name="shop", instructions="Help the customer.", model=model, tools=tools, **fields), model


def order_then_done(order_id: str = "O5", tool: str = "get_order") -> list[Any]:
    return [[function_call(tool, {"order_id": order_id}, call_id="call-1")], [assistant_message("Done.")]]


def outputs_seen(model: ScriptedModel, call_index: int) -> dict[str, Any]:
    """The tool outputs the model received in its `call_index`-th call, by call id."""
    items = model.calls[call_index].input
    return {i["call_id"]: i["output"] for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"}


def output_text(output: Any) -> str:
    """A function_call_output's text (a string, or input parts joined)."""
    if isinstance(output, str):
        return output
    return "\n".join(p.get("text", "") for p in output)


# -- MCP ---------------------------------------------------------------------------------------------

HERE = os.path.dirname(os.path.abspath(__file__))


def mcp_shop(log: str) -> Any:
    """The toy shop as a real stdio MCP server (`openai_mcp_shop.py`), logging its calls to `log`."""
    import sys

    from agents.mcp import MCPServerStdio

    return MCPServerStdio(params={"command": sys.executable, "args": [os.path.join(HERE, "openai_mcp_shop.py"), log]},
                          cache_tools_list=True, name="toy-shop")


def served_calls(log: str) -> list[str]:
    if not os.path.exists(log):
        return []
    with open(log, encoding="utf-8") as fh:
        return [json.loads(line)["tool"] for line in fh if line.strip()]


def git_server(repo: str) -> Any:
    """`mcp-server-git` over stdio on one repository (its reads carry readOnlyHint)."""
    import shutil
    import sys

    from agents.mcp import MCPServerStdio

    command = shutil.which("mcp-server-git", path=os.path.dirname(sys.executable)) or shutil.which("mcp-server-git")
    if command is None:
        pytest.skip("mcp-server-git is not installed (pip install 'stretto[test]')")
    return MCPServerStdio(params={"command": command, "args": ["--repository", repo]}, cache_tools_list=True,
                          name="git", client_session_timeout_seconds=30)


def repo_session(i: int, then: str, extra: dict[str, Any]) -> Session:
    """The agent lists its repositories, then calls `then` on the one it was given."""
    repo = f"/srv/repos/project{i}"
    listing = {"repos": [{"name": f"project{i}", "path": repo}]}
    events: list[Any] = [UserMessage(text="What changed in my project lately?"),
                         LLMTurn(calls=[ToolCall(call_id="a", tool="list_repos", arguments={})]),
                         ToolResult(call_id="a", tool="list_repos", content=json.dumps(listing), parsed=listing),
                         LLMTurn(calls=[ToolCall(call_id="b", tool=then, arguments={"repo_path": repo, **extra})]),
                         ToolResult(call_id="b", tool=then, content="Commit history:\nCommit: 'abc'"),
                         LLMTurn(text="Done.")]
    return Session(header=SessionHeader(session_id=f"repo-{then}-{i}", harness="toy"), events=events)


def repo_flow(then: str, mcp_tools: list[Any] = (), **extra: Any) -> Flow:
    """A flow that predicts `then(repo_path=<the listed repo>, **extra)` after `list_repos`.

    Its sessions' manifest calls both tools reads, whatever `then` really is, and carries the
    input contracts of `mcp_tools` (a served flow looks a tool up only while its contract holds).
    """
    from stretto_core import ToolKind, manifest_from_mcp_tools

    listed = manifest_from_mcp_tools(mcp_tools)
    tools = {name: spec.model_copy(update={"kind": ToolKind.read}) if name == then else spec
             for name, spec in listed.tools.items()}
    manifest = ToolManifest(tools=tools).merged(ToolManifest.declare(reads=["list_repos", then]))
    return learn_flow([repo_session(i, then, extra) for i in range(12)], manifest, constants=True)


def list_repos_tool(repo: str) -> FunctionTool:
    async def on_invoke_tool(ctx: Any, input: str) -> str:
        return json.dumps({"repos": [{"name": os.path.basename(repo), "path": repo}]})

    return FunctionTool(name="list_repos", description="The user's repositories.",
                        params_json_schema={"type": "object", "properties": {}, "additionalProperties": False},
                        on_invoke_tool=on_invoke_tool)
