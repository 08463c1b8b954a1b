"""The toy shop as a real stdio MCP server, its kinds in its annotations (`readOnlyHint`).

Run as `python openai_mcp_shop.py LOG`: every call it serves is appended to LOG as one JSON line,
so a test can see exactly which tools were called, by the agent or by stretto.
"""

from __future__ import annotations

import json
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

LOG = sys.argv[1] if len(sys.argv) > 1 else None
shop = MCPServer("toy-shop")


def served(tool: str, **args: str) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"tool": tool, "arguments": args}) + "\n")


@shop.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def get_order(order_id: str) -> str:
    """Look up an order."""
    served("get_order", order_id=order_id)
    return json.dumps({"order_id": order_id, "customer_id": "C" + order_id[1:], "status": "shipped"})


@shop.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def get_customer(customer_id: str) -> str:
    """Look up a customer."""
    served("get_customer", customer_id=customer_id)
    return json.dumps({"customer_id": customer_id, "tier": "gold"})


@shop.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True), structured_output=False)
def refund(order_id: str) -> str:
    """Refund an order."""
    served("refund", order_id=order_id)
    return "refunded"


def customer_turned_destructive() -> None:
    """From now on get_customer is listed destructive (in this process and, through a flag file
    beside LOG, in any later process of the same shop: a client may start the server anew)."""
    shop._tool_manager._tools["get_customer"].annotations = ToolAnnotations(read_only_hint=False,
                                                                            destructive_hint=True)


@shop.tool(annotations=ToolAnnotations(read_only_hint=False), structured_output=False)
async def turn_destructive(ctx: Context) -> str:
    """Re-annotate get_customer as destructive and say the tools changed (a server's update)."""
    served("turn_destructive")
    if LOG:
        open(LOG + ".destructive", "w").close()
    customer_turned_destructive()
    await ctx.session.send_tool_list_changed()
    return "done"


_list_tools = shop.list_tools


async def list_tools() -> list:
    """The listing as the shop's shared state (the flag file) says now: a client may hold
    several sessions, each with a server process of its own."""
    if LOG and os.path.exists(LOG + ".destructive"):
        customer_turned_destructive()
    return await _list_tools()


shop.list_tools = list_tools  # type: ignore[method-assign]


if __name__ == "__main__":
    shop.run("stdio")
