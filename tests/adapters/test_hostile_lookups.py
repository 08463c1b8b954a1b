"""The rest of the hostile-input matrix where the earlier tests left a cell open: a lookup whose
tool is slow (within its time: its result rides along), raises, or answers garbage, in the FastMCP
middleware and the proxy; the agent's own result comes back unchanged and the session holds the
lookup (a tool that answered with an error is shown as a failed read after the agent's result, as
the agent would have seen it). Every adapter and every input: test_hostile_matrix.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from proxy_support import read_session_files  # noqa: E402
from test_proxy_failures import RawHost  # noqa: E402

ORDER_O1 = {"order_id": "O1", "customer_id": "C7", "status": "shipped"}


@pytest.mark.parametrize("misbehaviour", ["slow", "raise", "garbage"])
def test_fastmcp_middleware(tmp_path: Path, misbehaviour: str) -> None:
    pytest.importorskip("fastmcp")
    from mcp import Client
    from test_fastmcp_middleware import shop, texts

    params = shop(tmp_path)
    params.env = {**(params.env or os.environ), "TOY_CUSTOMER": misbehaviour}

    async def run() -> list[str]:
        with anyio.fail_after(60):
            async with Client(params, mode="legacy") as client:
                return texts(await client.call_tool("get_order", {"order_id": "O1"}))

    got = anyio.run(run)
    assert json.loads(got[0]) == ORDER_O1
    [session] = read_session_files(tmp_path / "s")
    [lookup] = [e for e in session.events if e.kind == "lookup"]
    assert lookup.tool == "get_customer"
    if misbehaviour == "slow":
        assert not lookup.error and len(got) == 2 and '"tier": "gold"' in got[1]
    elif misbehaviour == "raise":  # the tool answered, with an error: shown as a failed read, after the result
        assert lookup.error and lookup.content.startswith("Error") and "(failed)" in got[-1]
    else:  # FastMCP turns what it cannot serialize into its text: recorded as the tool's answer
        assert lookup.content and len(got) <= 2


@pytest.mark.parametrize("misbehaviour", ["slow", "raise", "garbage"])
def test_proxy(tmp_path: Path, misbehaviour: str) -> None:
    env = {"TOY_SLOW_CUSTOMER": "0.2"} if misbehaviour == "slow" else {"TOY_CUSTOMER": misbehaviour}
    host = RawHost(tmp_path, "--lookup-timeout", "2", env=env)
    host.call(1, "get_order", {"order_id": "O1"})
    content = host.answer(1)["result"]["content"]
    assert json.loads(content[0]["text"]) == ORDER_O1
    host.call(2, "get_order", {"order_id": "O2"})
    assert "result" in host.answer(2)  # the proxy goes on
    status, stderr = host.finish()
    assert status in (0, 6), stderr  # 6: the server sent a line that is not JSON-RPC (garbage)
    lookups = [e for e in host.session().events if e.kind == "lookup"]
    assert lookups and lookups[0].tool == "get_customer"
    if misbehaviour == "slow":
        assert not lookups[0].error and len(content) == 2
    elif misbehaviour == "raise":  # a JSON-RPC error answer: shown as a failed read, after the result
        assert lookups[0].error and "(failed)" in content[-1]["text"]
    else:  # a broken line: the lookup fails, and is never shown
        assert lookups[0].error and len(content) == 1
