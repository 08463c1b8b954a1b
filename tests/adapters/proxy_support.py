"""Test support for the proxy: a scriptable stdio MCP server, a toy flow, and ways to start both.

`python proxy_support.py` is a small MCP server (2025-11-25 handshake) written straight on
JSON-RPC so each test can make it misbehave on purpose: crash mid-call, hang, send garbage,
log, report progress, ask the host for sampling, elicitation and roots, change its tools.
Its shop tools are the toy domain: `get_order` and `get_customer` are reads, `refund` a write.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
PYTHON = sys.executable

ORDERS = {"O1": {"order_id": "O1", "customer_id": "C7", "status": "shipped"},
          "O2": {"order_id": "O2", "customer_id": "C8", "status": "pending"},
          "O3": {"order_id": "O3", "customer_id": "C9", "status": "shipped"}}
CUSTOMERS = {"C7": {"customer_id": "C7", "tier": "gold"}, "C8": {"customer_id": "C8", "tier": "silver"},
             "C9": {"customer_id": "C9", "tier": "bronze"}}

READ = {"readOnlyHint": True, "destructiveHint": False}
WRITE = {"readOnlyHint": False, "destructiveHint": True}


class MemoryChannel:
    """One side of an in-process relay: what the proxy sent it (`sent`), and what it will say
    next (`inbox`)."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> Any:
        return await self.inbox.get()

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    async def aclose(self) -> None:
        pass

    async def answer(self, request_id: int) -> dict[str, Any]:
        """The message the proxy sent this side with id `request_id`, waited for up to 5 s."""
        for _ in range(500):
            for message in self.sent:
                if message.get("id") == request_id:
                    return message
            await asyncio.sleep(0.01)
        raise AssertionError(f"request {request_id} was never answered")


def _schema(**props: str) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}, "required": sorted(props)}


def tool_list(changed: bool = False, destructive: bool = False) -> list[dict[str, Any]]:
    customer = _schema(customer_id="string", region="string") if changed else _schema(customer_id="string")
    return [
        {"name": "get_order", "description": "An order by id", "inputSchema": _schema(order_id="string"),
         "annotations": READ},
        {"name": "get_customer", "description": "A customer by id", "inputSchema": customer,
         "annotations": WRITE if destructive else READ},
        {"name": "refund", "description": "Refund an order", "inputSchema": _schema(order_id="string"),
         "annotations": WRITE},
        {"name": "order_report", "description": "An order as structured data", "inputSchema": _schema(order_id="string"),
         "outputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}}, "annotations": READ},
        {"name": "crash", "description": "Exit mid-call", "inputSchema": _schema(), "annotations": READ},
        {"name": "hang", "description": "Never answer", "inputSchema": _schema(), "annotations": READ},
        {"name": "garbage", "description": "Answer with a broken line", "inputSchema": _schema(), "annotations": READ},
        {"name": "slow", "description": "Answer late, with progress", "inputSchema": _schema(seconds="number"),
         "annotations": READ},
        {"name": "ask_host", "description": "Ask the host for sampling, elicitation and roots",
         "inputSchema": _schema(), "annotations": READ},
        {"name": "change_tools", "description": "Change get_customer's schema", "inputSchema": _schema(),
         "annotations": WRITE},
        {"name": "seen", "description": "The notifications the server got", "inputSchema": _schema(),
         "annotations": READ},
        {"name": "turn_destructive", "description": "Re-annotate get_customer as destructive; list slowly after",
         "inputSchema": _schema(), "annotations": WRITE},
    ]


class ToyServer:
    """The server's state: its tools, what the host sent it, its outstanding requests to the host."""

    def __init__(self) -> None:
        self.changed = False
        self.destructive = False
        self.seen: list[str] = []
        self.waiting: dict[Any, asyncio.Future] = {}
        self.counter = 0
        self.out = sys.stdout.buffer

    def send(self, message: dict[str, Any]) -> None:
        self.out.write((json.dumps(message) + "\n").encode())
        self.out.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def ask(self, method: str, params: dict[str, Any]) -> Any:
        self.counter += 1
        request_id = f"srv-{self.counter}"
        future = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await future

    async def handle(self, message: dict[str, Any]) -> None:
        method, params, request_id = message.get("method"), message.get("params") or {}, message.get("id")
        if method is None:
            future = self.waiting.pop(request_id, None)
            if future is not None:
                future.set_result(message.get("result", message.get("error")))
            return
        if request_id is None:
            self.seen.append(method)
            return
        try:
            result = await self.answer(method, params, request_id)
        except KeyError as exc:
            self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": f"unknown {exc}"}})
            return
        if result is not None:
            self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def answer(self, method: str, params: dict[str, Any], request_id: Any) -> Any:
        if method == "initialize":
            return {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                    "capabilities": {"tools": {"listChanged": True}, "resources": {"subscribe": True},
                                     "prompts": {}, "logging": {}, "completions": {}},
                    "serverInfo": {"name": "toy-shop", "version": "1"}, "instructions": "A toy shop."}
        if method == "ping" or method == "logging/setLevel" or method == "resources/subscribe":
            return {}
        if method == "tools/list":
            if self.destructive:  # a server slow to list after its change (TOY_SLOW_LIST seconds)
                await asyncio.sleep(float(os.environ.get("TOY_SLOW_LIST", "0")))
            return {"tools": tool_list(self.changed, self.destructive)}
        if method == "resources/list":
            return {"resources": [{"uri": "shop://orders", "name": "orders", "mimeType": "application/json"}]}
        if method == "resources/read":
            return {"contents": [{"uri": params["uri"], "mimeType": "application/json", "text": json.dumps(ORDERS)}]}
        if method == "prompts/list":
            return {"prompts": [{"name": "greet", "description": "Greet a customer",
                                 "arguments": [{"name": "customer_id", "required": True}]}]}
        if method == "prompts/get":
            who = (params.get("arguments") or {}).get("customer_id", "?")
            return {"messages": [{"role": "user", "content": {"type": "text", "text": f"Greet {who}"}}]}
        if method == "completion/complete":
            return {"completion": {"values": sorted(CUSTOMERS), "hasMore": False}}
        if method == "tools/call":
            return await self.call(params.get("name"), params.get("arguments") or {}, params, request_id)
        raise KeyError(method)

    async def call(self, name: str, args: dict[str, Any], params: dict[str, Any], request_id: Any) -> Any:
        _log_call(name, args)
        if name == "get_order":
            own = own_order_text()
            if own is not None:
                return {"content": [{"type": "text", "text": own}], "isError": False}
            return _text(ORDERS.get(args.get("order_id"), {"error": "no such order"}))
        if name == "get_customer":
            await asyncio.sleep(float(os.environ.get("TOY_SLOW_CUSTOMER", "0")))
            misbehaviour = os.environ.get("TOY_CUSTOMER")  # raise | garbage: how its answer fails
            if misbehaviour == "raise":
                raise KeyError("the customer service is down")
            if misbehaviour == "garbage":
                self.out.write(b'{"jsonrpc": "2.0", "id": ' + json.dumps(request_id).encode() + b', "result": \n')
                self.out.flush()
                return None
            self.notify("notifications/message", {"level": "info", "data": f"read customer {args.get('customer_id')}"})
            return _text(CUSTOMERS.get(args.get("customer_id"), {"error": "no such customer"}))
        if name == "refund":
            return _text({"refunded": args.get("order_id")})
        if name == "order_report":
            order = ORDERS.get(args.get("order_id"), {})
            return {**_text(order), "structuredContent": {"order_id": order.get("order_id", "")}}
        if name == "crash":
            os._exit(7)
        if name == "hang":
            await asyncio.Event().wait()
        if name == "garbage":
            self.out.write(b"this is not json\n")
            self.send({"jsonrpc": "2.0", "id": request_id, "oops": True})
            return None
        if name == "slow":
            token = (params.get("_meta") or {}).get("progressToken")
            steps = 4
            for i in range(steps):
                if token is not None:
                    self.notify("notifications/progress", {"progressToken": token, "progress": i + 1, "total": steps})
                await asyncio.sleep(float(args.get("seconds", 0.2)) / steps)
            self.notify("notifications/message", {"level": "info", "data": "slow is done"})
            return _text({"slept": args.get("seconds")})
        if name == "ask_host":
            sampled = await self.ask("sampling/createMessage", {"messages": [
                {"role": "user", "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 5})
            elicited = await self.ask("elicitation/create", {"message": "Your name?", "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}}}})
            roots = await self.ask("roots/list", {})
            return _text({"sampled": sampled, "elicited": elicited, "roots": roots})
        if name == "change_tools":
            self.changed = True
            self.notify("notifications/tools/list_changed", {})
            return _text({"changed": True})
        if name == "big":  # a result of `megabytes` MB of text
            return _text("x" * int(float(args.get("megabytes", 1)) * 1_000_000))
        if name == "echo_size":  # how long the argument it was sent is
            return _text({"length": len(str(args.get("text", "")))})
        if name == "turn_destructive":
            self.destructive = True
            self.notify("notifications/tools/list_changed", {})
            return _text({"changed": True})
        if name == "seen":
            return _text({"seen": self.seen})
        return {"content": [{"type": "text", "text": f"unknown tool {name}"}], "isError": True}


def own_order_text() -> str | None:
    """With TOY_ORDER_FILE set, the text `get_order` answers with: the file holds it as one JSON
    string (so any text, a lone surrogate or 70 MB, can be asked for)."""
    path = os.environ.get("TOY_ORDER_FILE")
    if not path:
        return None
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _log_call(name: str, args: dict[str, Any]) -> None:
    """With TOY_CALL_LOG set, every tool call served is appended to it as one JSON line."""
    path = os.environ.get("TOY_CALL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"tool": name, "arguments": args}) + "\n")


def _text(value: Any) -> dict[str, Any]:
    if os.environ.get("TOY_CUT_EMOJI") and isinstance(value, dict):  # what JSON.stringify writes for a cut emoji
        value = {**value, "note": "half an emoji: \ud83d"}
    return {"content": [{"type": "text", "text": json.dumps(value)}], "isError": False}


async def _serve() -> None:
    server = ToyServer()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=512 * 1024 * 1024)  # big messages are tested too
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks = set()
    while True:
        line = await reader.readline()
        if not line:
            return
        task = asyncio.create_task(server.handle(json.loads(line)))
        tasks.add(task)
        task.add_done_callback(tasks.discard)


def toy_server_command() -> list[str]:
    return [PYTHON, str(HERE)]


def proxy_command(server: list[str], *options: str) -> list[str]:
    return [PYTHON, "-m", "stretto_core", "proxy", *options, "--", *server]


def toy_sessions(count: int = 12) -> list[Any]:
    """Recorded toy sessions: get_order, then get_customer with the order's customer id, then refund."""
    from stretto_core import ToolManifest
    from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage

    manifest = ToolManifest.declare("toy", reads=["get_order", "get_customer"], writes=["refund"])
    sessions = []
    for i in range(count):
        order = ORDERS[f"O{i % 3 + 1}"]
        customer = CUSTOMERS[order["customer_id"]]
        calls = [("get_order", {"order_id": order["order_id"]}, order),
                 ("get_customer", {"customer_id": order["customer_id"]}, customer),
                 ("refund", {"order_id": order["order_id"]}, {"refunded": order["order_id"]})]
        events: list[Any] = [UserMessage(text=f"refund order {order['order_id']}")]
        for n, (tool, args, result) in enumerate(calls):
            events.append(LLMTurn(calls=[ToolCall(call_id=f"c{n}", tool=tool, arguments=args)]))
            content = json.dumps(result)
            events.append(ToolResult(call_id=f"c{n}", tool=tool, content=content, parsed=result))
        events.append(LLMTurn(text="done"))
        sessions.append(Session(header=SessionHeader(session_id=f"toy-{i}", harness="test", app="toy",
                                                     manifest=manifest), events=events))
    return sessions


def toy_flow(path: Path, *, reads_in_flow: tuple[str, ...] = ("get_order", "get_customer")) -> Path:
    """A flow learned from the toy sessions (after get_order it looks up get_customer), saved."""
    from stretto_core import ToolManifest, learn_flow, save_flow

    manifest = ToolManifest.declare("toy", reads=list(reads_in_flow),
                                    writes=[t for t in ("refund", "get_customer") if t not in reads_in_flow])
    save_flow(learn_flow(toy_sessions(), manifest), path)
    return path


def read_session_files(store: Path) -> list[Any]:
    from stretto_core import read_session

    return [read_session(p) for p in sorted(store.glob("*.jsonl"))]


def serve_http(port: int) -> None:
    """The same shop's reads over Streamable HTTP, on the mcp SDK's low-level Server (loopback only)."""
    import mcp_types as types
    import uvicorn
    from mcp.server import Server

    listed = [types.Tool.model_validate(t) for t in tool_list() if t["name"] in ("get_order", "get_customer")]

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=listed)

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        args = params.arguments or {}
        value = ORDERS.get(args.get("order_id")) if params.name == "get_order" else CUSTOMERS.get(args.get("customer_id"))
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(value))])

    server = Server("toy-http", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="error")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        serve_http(int(sys.argv[2]))
    else:
        asyncio.run(_serve())
