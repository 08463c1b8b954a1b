"""stretto with the Claude Agent SDK, offline: record, learn, serve, and count the model's turns.

The agent runs in the real Claude Code CLI that ships with `claude-agent-sdk`; its model is a
small script served by a local stand-in for the Messages API (`stretto_claude.testing`), so no
key and no network are needed. The script acts like a careful agent: to answer "where is my
order?" it reads the order, then the customer it names, unless that customer is already in
front of it. The tools are an in-process MCP server whose read-only hints tell stretto what it
may look up.

    pip install "stretto[claude]"
    python examples/claude_quickstart.py          # four conversations, well under a minute
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, ToolAnnotations, create_sdk_mcp_server, query, tool

from stretto_claude import claude_hooks
from stretto_claude.testing import Reply, ScriptedMessagesAPI, result_texts
from stretto_core import learn_flow, load_sessions

READ_ONLY, WRITES = ToolAnnotations(readOnlyHint=True), ToolAnnotations(readOnlyHint=False)


@tool("get_order", "Look up an order", {"order_id": str}, annotations=READ_ONLY)
async def get_order(args: dict[str, Any]) -> dict[str, Any]:
    customer = "C" + args["order_id"].lstrip("O")
    return {"content": [{"type": "text", "text": json.dumps({"order_id": args["order_id"],
                                                             "customer_id": customer, "status": "shipped"})}]}


@tool("get_customer", "Look up a customer", {"customer_id": str}, annotations=READ_ONLY)
async def get_customer(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps({"customer_id": args["customer_id"], "tier": "gold"})}]}


@tool("refund", "Refund an order", {"order_id": str}, annotations=WRITES)
async def refund(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "refunded"}]}


SERVERS = {"shop": create_sdk_mcp_server("shop", tools=[get_order, get_customer, refund])}


def careful_agent(request: dict[str, Any]) -> Reply:
    """The scripted model: read the order, then its customer unless already seen, then answer."""
    blocks = [b for m in request["messages"] if m["role"] == "user"
              for b in (m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}])
              if isinstance(b, dict)]
    said = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    seen = " ".join(result_texts(b) for b in blocks if b.get("type") == "tool_result")
    order = re.findall(r"order (O\d+)", said)[-1]
    customer = "C" + order.lstrip("O")
    if f'"order_id": "{order}"' not in seen:
        return Reply(calls=[("mcp__shop__get_order", {"order_id": order})])
    if f'"customer_id": "{customer}", "tier"' not in seen:
        return Reply(calls=[("mcp__shop__get_customer", {"customer_id": customer})])
    return Reply(text=f"Order {order} has shipped; its customer {customer} is a gold member.")


async def ask(api: ScriptedMessagesAPI, folder: Path, question: str, flow: Any = None) -> int:
    """One conversation; returns the model turns it took."""
    options = ClaudeAgentOptions(hooks=claude_hooks(flow=flow, mcp_servers=SERVERS, store=folder / "sessions"),
                                 mcp_servers=SERVERS, allowed_tools=["mcp__shop"], tools=[],
                                 setting_sources=[], cwd=str(folder), env=api.env(folder / "claude"))
    before = len(api.turns)
    async for _ in options.hooks.watch(query(prompt=question, options=options)):  # watch: optional
        pass
    await options.hooks.aclose()
    return len(api.turns) - before


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, ScriptedMessagesAPI(careful_agent) as api:
        folder = Path(tmp)
        print("1. record three conversations (no flow yet: stretto only records)")
        without = [await ask(api, folder, f"Where is my order O{k}?") for k in (1, 2, 3)]
        print(f"   model turns: {without}")

        print("2. learn a flow from the recorded sessions")
        flow = learn_flow(load_sessions(folder / "sessions"))

        print("3. serve it to a new conversation")
        with_flow = await ask(api, folder, "Where is my order O4?", flow)
        shown = api.tool_results(len(api.turns) - 1)[0]["content"]
        print("   the model saw, inside get_order's result:")
        for block in shown[1:]:
            print("     " + block["text"].replace("\n", "\n     "))
        print(f"\nmodel turns per question: without stretto {without[-1]} -> with stretto {with_flow}")


if __name__ == "__main__":
    asyncio.run(main())
