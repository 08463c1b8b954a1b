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

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from stretto_core import ToolKind, ToolManifest, learn_flow  # noqa: E402
from stretto_core.flow.ir import save_flow  # noqa: E402
from stretto_core.serve.speculator import Guard  # noqa: E402

from test_claude_safety_property import TOOLS, Tools, as_session, histories, tool_sets  # noqa: E402

HINTS = ["read", "write", "destructive", "none"]


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

    shop = FastMCP("gen", middleware=[StrettoFastMCPMiddleware(flow, store=False, reads=sorted(tools.reads),
                                                               theta=theta, session_key=lambda ctx: "one")])

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


def fastmcp_property(made: list[int], changed: list[int], examples: int = 60, *,
                     expect_failure: bool = False) -> Any:
    """The property as a runnable hypothesis test; `made` gets each case's lookup count."""
    extra: dict[str, Any] = {"phases": (Phase.generate,), "database": None} if expect_failure else {}

    @settings(derandomize=True, max_examples=examples, deadline=None,
              suppress_health_check=[HealthCheck.too_slow], **extra)
    @given(tools=tool_sets(), history=histories(),
           learned_kinds=st.dictionaries(st.sampled_from(TOOLS), st.sampled_from([ToolKind.read, ToolKind.write])),
           theta=st.sampled_from([0.0, 0.05, 0.3]),
           change=st.tuples(st.integers(1, 6), st.integers(0, 5), st.sampled_from(HINTS + ["write", "destructive"])))
    def check(tools: Tools, history: tuple, learned_kinds: dict, theta: float, change: Any) -> None:
        train, served = history
        change = (change[0], served[min(change[1], len(served) - 1)][0], change[2])  # a tool of the habit
        learned = ToolManifest.declare(reads=[t for t in TOOLS if learned_kinds.get(t, ToolKind.read) is ToolKind.read],
                                       writes=[t for t in TOOLS if learned_kinds.get(t) is ToolKind.write])
        with tempfile.TemporaryDirectory() as folder:
            flow = Path(folder) / "gen.flow.json"
            save_flow(learn_flow([as_session(w, i) for i, w in enumerate(train)], learned), flow)
            lookups: list[tuple[str, str]] = []
            asyncio.run(serve(server(tools, flow, theta, lookups), tools, served, change))
        for name, hint in lookups:
            assert hint == "read" or (hint == "none" and name in tools.reads), \
                f"looked up {name} while hinted {hint} (vouched reads {sorted(tools.reads)})"
        made.append(len(lookups))
        changed.append(int(change is not None and change[0] < len(served)))

    return check


def test_through_the_fastmcp_middleware_stretto_only_ever_calls_known_reads_now() -> None:
    made: list[int] = []
    changed: list[int] = []
    fastmcp_property(made, changed)()
    print(f"{sum(1 for n in made if n)} of {len(made)} cases made lookups, {sum(made)} in all; "
          f"{sum(changed)} re-annotated a tool mid-session")
    assert len(made) >= 50
    assert sum(1 for n in made if n) >= 0.2 * len(made), f"only {sum(1 for n in made if n)} of {len(made)} made lookups"
    assert sum(changed) >= 0.2 * len(made)


def test_the_property_catches_a_guard_that_permits_every_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Guard, "permits", lambda self, tool: True)
    with pytest.raises(AssertionError, match="looked up"):
        fastmcp_property([], [], examples=40, expect_failure=True)()
