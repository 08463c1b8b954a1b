"""Safety in the FastMCP middleware: stretto never calls a tool that is not a known read *now*.

Over generated tool sets (each tool hinted read, write, destructive or not at all, and vouched
read by the operator or not), generated flows (which may call anything a read), generated calls,
and a re-annotation of one tool in the middle of the session (as a server's update does), every
call that reaches a tool from a lookup is of a tool that, at that moment, the server hints
read-only, or leaves unhinted and the operator vouches for. The server runs in process (FastMCP's
in-memory client); the middleware is the real one. The property asserts a good share of its
cases made lookups and that re-annotations happened, and is shown to fail once the engine's
guard permits every tool.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastmcp")

from stretto_core.flow.ir import save_flow  # noqa: E402
from stretto_core.serve.speculator import Guard  # noqa: E402

from safety_now import assert_exercised, now_property  # noqa: E402
from test_claude_safety_property import TOOLS, Tools  # noqa: E402


def annotations(hint: str) -> Any:
    from mcp_types import ToolAnnotations

    return {"read": ToolAnnotations(read_only_hint=True), "write": ToolAnnotations(read_only_hint=False),
            "destructive": ToolAnnotations(read_only_hint=True, destructive_hint=True), "none": None}[hint]


def server(tools: Tools, flow: Path, theta: float, lookups: list[tuple[str, str]]) -> Any:
    """A FastMCP server of TOOLS with the middleware; each lookup that reaches a tool is noted
    with the tool's hint at that moment."""
    from fastmcp import FastMCP

    from stretto_mcp import StrettoFastMCPMiddleware
    from stretto_mcp.fastmcp_middleware import _LOOKING_UP

    middleware = StrettoFastMCPMiddleware(flow, store=False, reads=sorted(tools.reads), deny=sorted(tools.writes),
                                          theta=theta, session_key=lambda ctx: "one")
    shop = FastMCP("gen", middleware=[middleware])

    def add(name: str) -> None:
        def handler(x: str) -> str:
            if _LOOKING_UP.get():
                lookups.append((name, tools.hints[name]))
            return json.dumps({"items": [x + "0", "b22"]})

        handler.__name__ = name
        shop.tool(handler, name=name, annotations=annotations(tools.hints[name]), output_schema=None)

    for name in TOOLS:
        add(name)
    shop.readd = add  # type: ignore[attr-defined]
    return shop


async def serve(shop: Any, tools: Tools, walk: list, change: tuple[int, str, str] | None) -> None:
    from fastmcp import Client

    async with Client(shop) as client:
        for k, (tool, value, _) in enumerate(walk):
            if change is not None and change[0] == k:
                _, name, hint = change
                tools.hints[name] = hint
                shop.local_provider.remove_tool(name)
                shop.readd(name)
            await client.call_tool(tool, {"x": value}, raise_on_error=False)


def run_case(tools: Tools, flow: Any, theta: float, served: list, change: tuple) -> list[tuple[str, str]]:
    lookups: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "gen.flow.json"
        save_flow(flow, path)
        asyncio.run(serve(server(tools, path, theta, lookups), tools, served, change))
    return lookups


def test_through_the_fastmcp_middleware_stretto_only_ever_calls_known_reads_now() -> None:
    made: list[int] = []
    changed: list[int] = []
    now_property(run_case, made, changed, examples=60)()
    assert_exercised(made, changed, least=50)


def test_the_property_catches_a_guard_that_permits_every_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Guard, "permits", lambda self, tool: True)
    with pytest.raises(AssertionError, match="looked up"):
        now_property(run_case, [], [], examples=40, expect_failure=True)()
