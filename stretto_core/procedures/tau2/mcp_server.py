"""One τ²-bench telecom solo task's environment served as an MCP server, to run procedures over MCP.

Every tool the solo agent has (13 of the agent's, 30 of the phone's) is listed with its τ² schema
and a `readOnlyHint` from the shipped manifest; a call is answered by the task's environment
exactly as `SoloToolSet.call` answers it (an error result has `isError`).

    python -m stretto_core.procedures.tau2.mcp_server --task-id "<task>"    # stdio
    stretto procedure run P.json --ticket "…" --mcp "python -m stretto_core.procedures.tau2.mcp_server --task-id …"
"""

from __future__ import annotations

import argparse
from typing import Any

from stretto_core.procedures.tau2.env import SoloToolSet, telecom_tasks


def _kinds() -> dict[str, str]:
    from stretto_core.paths import manifest_path
    from stretto_core.sessions.manifest import load_manifest

    try:
        manifest = load_manifest(manifest_path("tau2", "telecom"))
    except Exception:  # no manifest: no hints (a client then treats every tool as unknown)
        return {}
    return {name: spec.kind.value for name, spec in manifest.tools.items()}


def build_server(task: Any, db: Any | None = None) -> Any:
    """A low-level MCP server over a fresh solo environment of `task`."""
    from mcp import types
    from mcp.server.lowlevel import Server

    tools = SoloToolSet(task, db)
    kinds = _kinds()
    listed = []
    for tool in tools.env.get_tools() + (tools.env.get_user_tools() or []):
        schema = tool.openai_schema["function"]
        kind = kinds.get(schema["name"])
        hint = None if kind is None else types.ToolAnnotations(read_only_hint=kind == "read")
        listed.append(types.Tool(name=schema["name"], description=schema.get("description"),
                                 input_schema=schema.get("parameters") or {"type": "object"}, annotations=hint))

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: Any) -> Any:
        content, error = tools.call(params.name, dict(params.arguments or {}))
        return types.CallToolResult(content=[types.TextContent(text=content)], is_error=error)

    return Server("tau2-telecom-solo", on_list_tools=list_tools, on_call_tool=call_tool)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve one τ² telecom solo task's environment over MCP (stdio).")
    parser.add_argument("--task-id", required=True)
    args = parser.parse_args(argv)
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(telecom_tasks()[args.task_id])

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
