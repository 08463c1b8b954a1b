"""A small, quick stdio MCP server for throughput runs: every order id is an order.

The tests' toy server (`tests/adapters/proxy_support.py`) knows three orders, so a session of
thousands of calls would repeat the same three lookups, which a served session makes once. This
one answers any `get_order(order_id="O<n>")` with an order of customer `C<n>`, and any
`get_customer`, so the toy flow (after `get_order`, look up `get_customer`) makes one new lookup
after every call. It is plain blocking stdio, one line in, one line out, so its own CPU is small
beside the proxy's it is measured behind.

    python benchmarks/shop_server.py
"""

from __future__ import annotations

import json
import sys
from typing import Any

READ = {"readOnlyHint": True, "destructiveHint": False}


def _schema(name: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}


TOOLS = [{"name": "get_order", "description": "An order by id", "inputSchema": _schema("order_id"),
          "annotations": READ},
         {"name": "get_customer", "description": "A customer by id", "inputSchema": _schema("customer_id"),
          "annotations": READ}]


def _text(value: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(value)}], "isError": False}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool's result: orders and customers are made up from their ids."""
    if name == "get_order":
        order_id = str(arguments.get("order_id", ""))
        return _text({"order_id": order_id, "customer_id": "C" + order_id.lstrip("O"), "status": "shipped"})
    if name == "get_customer":
        return _text({"customer_id": str(arguments.get("customer_id", "")), "tier": "gold"})
    return {"content": [{"type": "text", "text": f"unknown tool {name}"}], "isError": True}


def answer(method: str, params: dict[str, Any]) -> Any:
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-11-25"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "shop", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call(params.get("name", ""), params.get("arguments") or {})
    return {}


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification, or an answer to no request of ours
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message["method"], message.get("params") or {})}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
