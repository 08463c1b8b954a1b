"""stretto inside a FastMCP server (`stretto[fastmcp]`): the middleware serves as the proxy does.

The toy shop runs as a FastMCP stdio server with `StrettoMiddleware` (`fastmcp_shop.py`), and a
real `mcp` Client calls it in both protocol eras. Skipped where FastMCP is not installed (it is
an optional extra, kept out of `all`: see docs/proxy.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("fastmcp")
pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from proxy_support import HERE, PYTHON, read_session_files, toy_flow  # noqa: E402
from stretto_mcp.scripted import same_code_env  # noqa: E402

SHOP = HERE.parent / "fastmcp_shop.py"


def shop(tmp_path: Path, flow: bool = True) -> StdioServerParameters:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = str(toy_flow(tmp_path / "toy.flow.json")) if flow else "-"
    args = [str(SHOP), path, str(tmp_path / "s"), str(tmp_path / "calls.log")]
    return StdioServerParameters(command=PYTHON, args=args, env=same_code_env())


def served(tmp_path: Path) -> list[str]:
    log = tmp_path / "calls.log"
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()] if log.exists() else []


def texts(result: Any) -> list[str]:
    return [getattr(block, "text", "") for block in result.content]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_lookup_rides_on_the_agents_result_as_one_more_text_block(tmp_path: Path, mode: str) -> None:
    async def run() -> list[str]:
        async with Client(shop(tmp_path), mode=mode) as client:
            return texts(await client.call_tool("get_order", {"order_id": "O1"}))

    first, appended = anyio.run(run)
    assert json.loads(first)["customer_id"] == "C7"
    assert 'get_customer {"customer_id": "C7"}:\n{"customer_id": "C7", "tier": "gold"}' in appended
    assert served(tmp_path) == ["get_order", "get_customer"]
    [session] = read_session_files(tmp_path / "s")
    assert session.header.harness == "fastmcp" and session.header.app == "toy-shop"
    assert [e.kind for e in session.events] == ["llm_turn", "tool_result", "lookup"]
    assert session.events[0].inferred and session.events[1].appended


def test_without_a_flow_it_records_and_appends_nothing(tmp_path: Path) -> None:
    async def run() -> int:
        async with Client(shop(tmp_path, flow=False), mode="legacy") as client:
            return len((await client.call_tool("get_order", {"order_id": "O1"})).content)

    assert anyio.run(run) == 1 and served(tmp_path) == ["get_order"]
    [session] = read_session_files(tmp_path / "s")
    assert [e.kind for e in session.events] == ["llm_turn", "tool_result"]


def test_a_tool_with_an_output_schema_keeps_its_structured_content_exactly(tmp_path: Path) -> None:
    async def run() -> Any:
        async with Client(shop(tmp_path), mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["order_report"].output_schema is not None
            return await client.call_tool("order_report", {"order_id": "O1"})

    result = anyio.run(run)
    assert result.structured_content == {"order_id": "O1"}  # the client validated it against the schema
    assert json.loads(texts(result)[0]) == {"order_id": "O1"}


def test_a_write_is_never_looked_up_even_when_the_flow_calls_it_a_read(tmp_path: Path) -> None:
    tmp_path.mkdir(parents=True, exist_ok=True)
    flow = toy_flow(tmp_path / "toy.flow.json", reads_in_flow=("get_order", "get_customer", "refund"))
    params = shop(tmp_path)
    params.args[1] = str(flow)

    async def run() -> None:
        async with Client(params, mode="legacy") as client:
            for order in ("O1", "O2", "O3"):
                await client.call_tool("get_order", {"order_id": order})

    anyio.run(run)
    assert "refund" not in served(tmp_path) and "get_customer" in served(tmp_path)


def test_a_changed_contract_mid_session_stops_its_lookups_and_the_session_says_why(tmp_path: Path) -> None:
    async def run() -> tuple[list[str], list[str]]:
        async with Client(shop(tmp_path), mode="legacy") as client:
            before = texts(await client.call_tool("get_order", {"order_id": "O1"}))
            await client.call_tool("change_tools", {})
            after = texts(await client.call_tool("get_order", {"order_id": "O3"}))
            return before, after

    before, after = anyio.run(run)
    assert len(before) == 2, "the lookup was made before the change: the test would prove nothing"
    assert len(after) == 1 and served(tmp_path).count("get_customer") == 1
    [session] = read_session_files(tmp_path / "s")
    [refusal] = [e for e in session.events if e.kind == "refusal"]
    assert (refusal.tool, refusal.reason) == ("get_customer", "schema_changed")
    kinds = [e.kind for e in session.events]
    assert kinds.index("lookup") < kinds.index("refusal") < len(kinds) - 1


def test_a_call_that_fails_reaches_the_client_as_its_error_and_the_session_goes_on(tmp_path: Path) -> None:
    async def run() -> tuple[Any, list[str]]:
        async with Client(shop(tmp_path), mode="legacy") as client:
            failed = await client.call_tool("get_order", {})  # no order_id: FastMCP refuses the call
            return failed, texts(await client.call_tool("get_order", {"order_id": "O2"}))

    failed, after = anyio.run(run)
    assert failed.is_error and "order_id" in texts(failed)[0]
    assert len(after) == 2 and '"tier": "silver"' in after[1]
    [session] = read_session_files(tmp_path / "s")
    turns = [e for e in session.events if e.kind == "llm_turn"]
    assert [t.calls[0].arguments for t in turns] == [{}, {"order_id": "O2"}]
