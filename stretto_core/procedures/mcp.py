"""Run a procedure against an MCP server (stdio command, URL, or an in-process server object).

The runtime's decisions do not change; only the calls go through `mcp.Client.call_tool`. A
result's text is its text blocks joined by newlines, and `is_error` is the server's flag. The
`mcp` package is imported here only.
"""

from __future__ import annotations

from typing import Any

from stretto_core.procedures.ir import Procedure
from stretto_core.procedures.runtime import RunResult, arun_procedure


def mcp_result_text(result: Any) -> tuple[str, bool]:
    """`(text, is_error)` of an MCP `CallToolResult` (text blocks joined; others skipped)."""
    blocks = getattr(result, "content", None) or []
    texts = [getattr(b, "text", None) for b in blocks]
    return "\n".join(t for t in texts if isinstance(t, str)), bool(getattr(result, "is_error", False))


def stdio_server(command: list[str]) -> Any:
    """Server parameters for an MCP server started as a subprocess speaking stdio."""
    from mcp import StdioServerParameters

    if not command:
        raise ValueError("an MCP server command is needed")
    return StdioServerParameters(command=command[0], args=list(command[1:]))


async def run_on_mcp(procedure: Procedure, ticket: str, server: Any) -> RunResult:
    """Run the procedure with every call made on the MCP server `server`."""
    from mcp import Client

    async with Client(server) as client:
        async def call(tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
            return mcp_result_text(await client.call_tool(tool, arguments))

        return await arun_procedure(procedure, ticket, call)
