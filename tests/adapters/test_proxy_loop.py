"""`STRETTO_PROXY_LOOP=uvloop`: the proxy on uvloop's event loop serves the same, and falls back to
asyncio's loop where uvloop cannot run (a regular file as stdin aborts it) or is not installed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest

from proxy_support import PYTHON, proxy_command, toy_flow, toy_server_command

LINES = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
    {"jsonrpc": "2.0", "id": 2, "method": "ping"}]


def test_a_file_as_stdin_falls_back_to_asyncio_and_exits_with_a_status_not_an_abort(tmp_path: Path) -> None:
    given = tmp_path / "host.jsonl"
    given.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    from stretto_mcp.scripted import same_code_env

    env = {**same_code_env(), "STRETTO_PROXY_LOOP": "uvloop"}
    with open(given, "rb") as stdin:
        done = subprocess.run(proxy_command(toy_server_command(), "--no-record"), stdin=stdin,
                              capture_output=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-500:]  # a file of requests: each answered, then done
    assert sorted(json.loads(line)["id"] for line in done.stdout.splitlines()) == [1, 2]


def test_the_proxy_on_uvloops_loop_appends_lookups_as_on_asyncios(tmp_path: Path) -> None:
    pytest.importorskip("uvloop")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from stretto_mcp.scripted import same_code_env

    command = proxy_command(toy_server_command(), "--flow", str(toy_flow(tmp_path / "toy.flow.json")),
                            "--store", str(tmp_path / "s"))
    params = StdioServerParameters(command=command[0], args=command[1:],
                                   env={**same_code_env(), "STRETTO_PROXY_LOOP": "uvloop"})

    async def run() -> int:
        async with Client(params, mode="legacy") as client:
            return len((await client.call_tool("get_order", {"order_id": "O1"})).content)

    assert anyio.run(run) == 2
    assert subprocess.run([PYTHON, "-c", "import uvloop"]).returncode == 0
