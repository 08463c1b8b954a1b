"""The toy shop as a FastMCP server with stretto's middleware in it (needs `stretto[fastmcp]`).

    python fastmcp_shop.py FLOW STORE [LOG]

Its reads carry `readOnlyHint`, `refund` is a write, `order_report` has an output schema, and
`change_tools` swaps `get_customer` for one with another input schema at run time. Every call
the tools serve is appended to LOG as one JSON line, so a test sees what stretto called.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from fastmcp import FastMCP
from mcp_types import ToolAnnotations

from proxy_support import CUSTOMERS, ORDERS, own_order_text
from stretto_mcp import StrettoFastMCPMiddleware

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
LOG = sys.argv[3] if len(sys.argv) > 3 else None


def served(tool: str, **args: Any) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"tool": tool, "arguments": args}) + "\n")


def cut(value: dict[str, Any]) -> str:
    """The value as JSON; with TOY_CUT_EMOJI set, carrying a lone surrogate (a cut emoji)."""
    if os.environ.get("TOY_CUT_EMOJI"):
        value = {**value, "note": "half an emoji: \ud83d"}
    return json.dumps(value)


def build(flow: str | None, store: str | None) -> FastMCP:
    limits = {"lookup_timeout": 0.3, "call_budget": 0.6} if os.environ.get("TOY_CUSTOMER_HANGS") else {}
    shop = FastMCP("toy-shop", middleware=[StrettoFastMCPMiddleware(flow, store=store, theta=0.3, **limits)])

    @shop.tool(annotations=READ, output_schema=None)
    def get_order(order_id: str) -> str:
        """An order by id."""
        served("get_order", order_id=order_id)
        own = own_order_text()  # TOY_ORDER_FILE: any text, asked for by the test
        if own is not None:
            return own
        return cut(ORDERS.get(order_id, {"error": "no such order"}))

    def get_customer(customer_id: str) -> str:
        """A customer by id."""
        served("get_customer", customer_id=customer_id)
        if os.environ.get("TOY_CUSTOMER_HANGS"):
            threading.Event().wait()  # a sync tool that never returns
        misbehaviour = os.environ.get("TOY_CUSTOMER")  # slow | raise | garbage
        if misbehaviour == "slow":
            time.sleep(0.2)
        if misbehaviour == "raise":
            raise RuntimeError("the customer service is down")
        if misbehaviour == "garbage":
            return object()  # type: ignore[return-value]  # nothing FastMCP can serialize
        return cut(CUSTOMERS.get(customer_id, {"error": "no such customer"}))

    shop.tool(get_customer, annotations=READ, output_schema=None)

    @shop.tool(annotations=WRITE, output_schema=None)
    def refund(order_id: str) -> str:
        """Refund an order."""
        served("refund", order_id=order_id)
        return json.dumps({"refunded": order_id})

    @shop.tool(annotations=READ)
    def order_report(order_id: str) -> dict:
        """An order as structured data."""
        served("order_report", order_id=order_id)
        return {"order_id": ORDERS.get(order_id, {}).get("order_id", "")}

    @shop.tool(annotations=WRITE, output_schema=None)
    def change_tools() -> str:
        """Replace get_customer with one that takes a region too."""
        shop.local_provider.remove_tool("get_customer")

        def get_customer(customer_id: str, region: str) -> str:
            """A customer by id, in a region."""
            served("get_customer", customer_id=customer_id, region=region)
            return json.dumps(CUSTOMERS.get(customer_id, {}))

        shop.tool(get_customer, annotations=READ, output_schema=None)
        return json.dumps({"changed": True})

    return shop


if __name__ == "__main__":
    build(sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None,
          sys.argv[2] if len(sys.argv) > 2 else None).run("stdio", show_banner=False)
