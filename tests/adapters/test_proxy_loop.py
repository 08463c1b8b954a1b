"""The proxy runs on uvloop's event loop where uvloop is installed (`STRETTO_PROXY_LOOP=asyncio`
keeps asyncio's), serves the same on it, and falls back to asyncio's loop where uvloop cannot
run (a regular file as stdin aborts it) or is not installed."""

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


LOOP_PROBE = ("import asyncio, sys; from stretto_mcp.run import _fast_event_loop; _fast_event_loop(); "
              "sys.stderr.write(type(asyncio.get_event_loop_policy()).__module__)")


def _loop_chosen(env_loop: str | None) -> str:
    """The event loop policy's module a proxy started by a host (stdio on pipes) would run on."""
    from stretto_mcp.scripted import same_code_env

    env = same_code_env()
    env.pop("STRETTO_PROXY_LOOP", None)
    if env_loop is not None:
        env["STRETTO_PROXY_LOOP"] = env_loop
    done = subprocess.run([PYTHON, "-c", LOOP_PROBE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-500:]
    return done.stderr.decode().strip()


def test_a_proxy_a_host_starts_runs_on_uvloops_loop_where_uvloop_is_installed() -> None:
    pytest.importorskip("uvloop")
    assert _loop_chosen(None).startswith("uvloop")


def test_stretto_proxy_loop_asyncio_keeps_asyncios_loop() -> None:
    assert _loop_chosen("asyncio").startswith("asyncio")
