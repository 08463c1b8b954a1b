"""Secrets never at rest (issue 27, item 1): an OpenAI Agents SDK app, instrumented, whose MCP
server is `stretto proxy` in front of a server started with keys on its command line. Every file
the two write (the SDK's sessions, the proxy's sessions, its `--trace`, the flow) and the proxy's
log hold none of the keys, and none is readable by others (the run under umask 022)."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
import pytest

pytest.importorskip("mcp")
pytest.importorskip("agents")

from openai_support import order_then_done, scripted_agent, shop_flow  # noqa: E402
from proxy_support import proxy_command, toy_flow, toy_server_command  # noqa: E402

from agents import Runner  # noqa: E402
from stretto_mcp.scripted import same_code_env  # noqa: E402
from stretto_openai_agents import instrument  # noqa: E402

SECRETS = ["sk-live-abcdef1234567890XYZ", "hunter2", "tok9f8e7d6c5b4a"]


def server_with_keys() -> list[str]:
    return [*toy_server_command(), "--api-key", SECRETS[0], "--dsn", "postgres://admin:hunter2@db.internal/shop",
            f"--token={SECRETS[2]}"]


async def run_through_proxy(tmp_path: Path) -> None:
    from agents.mcp import MCPServerStdio

    proxy = proxy_command(server_with_keys(), "--flow", str(toy_flow(tmp_path / "out" / "toy.flow.json")),
                          "--store", str(tmp_path / "out" / "proxy-sessions"), "--trace",
                          str(tmp_path / "out" / "trace.jsonl"), "--log-level", "DEBUG")
    # the proxy's stderr (its log) kept in a file the test makes, to read it after
    wrapped = ["/bin/sh", "-c", 'exec "$@" 2>>"$PROXY_LOG"', "sh", *proxy]
    env = {**same_code_env(), "PROXY_LOG": str(tmp_path / "proxy.log")}
    server = MCPServerStdio(params={"command": wrapped[0], "args": wrapped[1:], "env": env}, cache_tools_list=True,
                            name="toy-through-stretto", client_session_timeout_seconds=60)
    agent, _ = scripted_agent([], order_then_done("O1"), mcp_servers=[server])
    agent = instrument(agent, flow=shop_flow(), store=tmp_path / "out" / "sdk-sessions")
    async with server:
        await Runner.run(agent, "Please refund order O1.")


def test_no_file_a_proxy_and_an_sdk_session_write_holds_a_key_or_is_readable_by_others(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        asyncio.run(run_through_proxy(tmp_path))
    finally:
        os.umask(old)
    out = tmp_path / "out"
    files = [p for p in out.rglob("*") if p.is_file()]
    names = {p.parent.name for p in files if p.suffix == ".jsonl"}
    assert {"proxy-sessions", "sdk-sessions", "out"} <= names, files  # both sessions and the trace were written
    header = next((out / "proxy-sessions").glob("*.jsonl")).read_text().splitlines()[0]
    assert "--api-key <redacted>" in header and "postgres" not in header  # the server is still named
    for path in [*files, tmp_path / "proxy.log"]:
        text = path.read_text(errors="replace")
        assert not [s for s in SECRETS if s in text], f"{path} holds a key"
    others = {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode))
              for p in [*files, *(d for d in out.rglob("*") if d.is_dir())] if p.stat().st_mode & 0o077}
    assert others == {}, f"readable by others: {others}"

