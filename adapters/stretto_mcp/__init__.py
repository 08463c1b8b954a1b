"""stretto's MCP proxy: a stdio MCP server in front of any MCP server, serving a flow.

    stretto proxy --flow retail.flow.json -- python -m my_server      # the CLI verb
    from stretto_mcp import ProxyConfig, run_proxy                     # the same from Python
    from stretto_mcp import StrettoFastMCPMiddleware                   # inside a FastMCP server

The proxy forwards every message both ways, records the session, and after each of the agent's
tool calls makes the flow's read-only lookups on the same server session and appends their
results to the agent's result (`relay.py`, `served.py`). Install with `pip install "stretto[mcp]"`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["ExitStatus", "ProxyConfig", "StrettoFastMCPMiddleware", "run_proxy", "serve"]

if TYPE_CHECKING:  # for type checkers; at run time each loads on first use (FastMCP only when asked for)
    from stretto_mcp.fastmcp_middleware import StrettoFastMCPMiddleware as StrettoFastMCPMiddleware
    from stretto_mcp.relay import ExitStatus as ExitStatus
    from stretto_mcp.run import ProxyConfig as ProxyConfig, run_proxy as run_proxy, serve as serve


def __getattr__(name: str) -> Any:
    if name in ("ProxyConfig", "run_proxy", "serve"):
        from stretto_mcp import run

        return getattr(run, name)
    if name == "StrettoFastMCPMiddleware":
        from stretto_mcp.fastmcp_middleware import StrettoFastMCPMiddleware

        return StrettoFastMCPMiddleware
    if name == "ExitStatus":
        from stretto_mcp.relay import ExitStatus

        return ExitStatus
    raise AttributeError(f"module 'stretto_mcp' has no attribute {name!r}")
