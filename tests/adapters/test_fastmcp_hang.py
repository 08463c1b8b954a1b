"""A lookup of a sync FastMCP tool that never returns: the client gets its own result on time,
the lookup is recorded as abandoned and the tool cools down, so the next call makes no lookup of
it and is answered at once."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("fastmcp")
pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from proxy_support import read_session_files  # noqa: E402
from test_fastmcp_middleware import served, shop, texts  # noqa: E402


def test_a_lookup_that_never_returns_leaves_the_clients_call_on_time_and_the_tool_cools_down(
        tmp_path: Path) -> None:
    params = shop(tmp_path)
    params.env = {**(params.env or os.environ), "TOY_CUSTOMER_HANGS": "1"}

    async def run() -> tuple[list[str], list[str], float]:
        with anyio.fail_after(60):
            async with Client(params, mode="legacy") as client:
                first = texts(await client.call_tool("get_order", {"order_id": "O1"}))
                started = time.monotonic()
                second = texts(await client.call_tool("get_order", {"order_id": "O2"}))
                return first, second, time.monotonic() - started

    first, second, took = anyio.run(run)
    assert len(first) == 1 and json.loads(first[0])["customer_id"] == "C7"  # its own result, unchanged
    assert len(second) == 1 and json.loads(second[0])["customer_id"] == "C8"
    assert served(tmp_path) == ["get_order", "get_customer", "get_order"]  # no second lookup: cooling down
    [session] = read_session_files(tmp_path / "s")
    [lookup] = [e for e in session.events if e.kind == "lookup"]
    assert lookup.tool == "get_customer" and lookup.abandoned
    assert [e.reason for e in session.events if e.kind == "refusal"][:2] == ["lookup_timeout", "cooldown"]
