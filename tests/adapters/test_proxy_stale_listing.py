"""After the server says its tools changed, the proxy makes no lookup until it has read the new
listing: a slow listing means no lookups meanwhile, never lookups on the old one (issue 26, 3)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from proxy_support import proxy_command, read_session_files, toy_flow, toy_server_command

pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from stretto_mcp.scripted import same_code_env  # noqa: E402

SLOW_LISTING = 12.0
"""Seconds the server takes to list its tools after the change: past the proxy's 10 s listing wait."""


def _texts(result: Any) -> list[str]:
    return [getattr(block, "text", "") for block in result.content]


def test_a_tool_re_annotated_destructive_is_not_looked_up_while_the_new_listing_is_slow(tmp_path: Path) -> None:
    command = proxy_command(toy_server_command(), "--flow", str(toy_flow(tmp_path / "toy.flow.json")),
                            "--store", str(tmp_path / "s"))
    env = {**same_code_env(), "TOY_SLOW_LIST": str(SLOW_LISTING)}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)

    async def run() -> tuple[list[str], list[list[str]], float]:
        async with Client(params, mode="legacy") as client:
            await client.list_tools()
            before = _texts(await client.call_tool("get_order", {"order_id": "O1"}))
            await client.call_tool("turn_destructive", {})
            started = time.monotonic()
            after = [_texts(await client.call_tool("get_order", {"order_id": order})) for order in ("O2", "O3")]
            return before, after, time.monotonic() - started

    before, after, waited = anyio.run(run)
    assert len(before) == 2 and "C7" in before[1], "no lookup before the change: the test would prove nothing"
    assert [len(texts) for texts in after] == [1, 1], after
    assert waited < SLOW_LISTING - 2, "the agent's calls waited for the slow listing"
    [session] = read_session_files(tmp_path / "s")
    changed_at = next(i for i, e in enumerate(session.events)
                      if e.kind == "tool_result" and e.tool == "turn_destructive")
    later_lookups = [e.tool for e in session.events[changed_at:] if e.kind == "lookup"]
    assert later_lookups == []
    refusals = [(e.tool, e.reason) for e in session.events if e.kind == "refusal"]
    assert ("get_customer", "listing_stale") in refusals  # said when the notice came


def test_a_fresh_listing_after_the_change_notice_is_what_decides(tmp_path: Path) -> None:
    """The same change answered at once: the new listing is read and marks get_customer a write."""
    command = proxy_command(toy_server_command(), "--flow", str(toy_flow(tmp_path / "toy.flow.json")),
                            "--store", str(tmp_path / "s"))
    params = StdioServerParameters(command=command[0], args=command[1:], env=same_code_env())

    async def run() -> list[str]:
        async with Client(params, mode="legacy") as client:
            await client.call_tool("turn_destructive", {})
            await anyio.sleep(0.5)  # the proxy reads the new listing
            return _texts(await client.call_tool("get_order", {"order_id": "O2"}))

    assert len(anyio.run(run)) == 1
    [session] = read_session_files(tmp_path / "s")
    reasons = [(e.tool, e.reason, e.lifted) for e in session.events if e.kind == "refusal"]
    assert ("get_customer", "marked_write", None) in reasons
    assert [e for e in session.events if e.kind == "lookup"] == []
