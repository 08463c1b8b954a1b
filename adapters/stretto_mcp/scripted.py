"""A scripted agent on the real `mcp` Client, through the proxy, on recorded τ² episodes.

Each episode runs three processes, as a host would: the client (this process, the scripted
model's brain an `EpisodePlayer`), `stretto proxy`, and τ²'s environment as an MCP server
(`tau2_server.py`) at the task's initial state. The calls of one model turn are sent together,
as a host sends parallel calls; the texts the client gets back (the lookups' block included)
are what the scripted model reads. Used by `tests/adapters/test_proxy_e2e.py` and
`benchmarks/proxy_e2e.py`.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence


HOSTS = ("mcp", "openai-agents")
"""The MCP clients a scripted episode can run on."""


@dataclass(frozen=True)
class ProxiedRun:
    session_id: str
    llm_turns: int
    recorded_turns: int
    saved_turns: int
    appended: int
    """Results that came back with a lookups block."""


def same_code_env() -> dict[str, str]:
    """This environment, with PYTHONPATH leading to the stretto this process runs (a checkout's,
    not an installed copy): MCP clients start a stdio server with only a few variables of their
    own environment, so without it the proxy child may import another stretto."""
    import stretto_core
    import stretto_mcp

    roots = [str(Path(module.__file__).resolve().parents[1]) for module in (stretto_core, stretto_mcp)]
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(roots + inherited))}


def server_command(session: Any) -> list[str]:
    from stretto_core.evaluate.envs import split_app

    _, domain = split_app(session.header.app)
    command = [sys.executable, "-m", "stretto_mcp.tau2_server", "--domain", domain]
    if session.header.task_id:
        command += ["--task-id", session.header.task_id]
    return command


def proxy_command(server: list[str], flow: Path | None, store: Path, theta: float) -> list[str]:
    command = [sys.executable, "-m", "stretto_core", "proxy", "--store", str(store), "--theta", str(theta),
               "--log-level", "WARNING"]
    if flow is not None:
        command += ["--flow", str(flow)]
    trace = os.environ.get("STRETTO_PROXY_TRACE")
    if trace:
        command += ["--trace", trace]
    return [*command, "--", *server]


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def run_episode(session: Any, flow: Path | None, store: Path, *, theta: float = 0.3,
                      mode: str = "legacy") -> ProxiedRun:
    """One recorded episode, played by the scripted model through the proxy."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from stretto_core.evaluate.scripted import EpisodePlayer

    player = EpisodePlayer(session)
    command = proxy_command(server_command(session), flow, store, theta)
    appended = 0
    async with Client(StdioServerParameters(command=command[0], args=command[1:], env=same_code_env()), mode=mode) as client:
        await client.list_tools()
        for _segment in player.segments():
            outputs: list[str] = []
            while True:
                turn = player.next_turn(outputs)
                if not turn.calls:
                    break
                results = await asyncio.gather(*(client.call_tool(c.tool, c.arguments) for c in turn.calls))
                outputs = [_text(r) for r in results]
                appended += sum(1 for r in results if len(r.content) > 1)
    return ProxiedRun(session.header.session_id, player.llm_turns, player.recorded_turns, player.saved_turns,
                      appended)


def run_episodes(sessions: Sequence[Any], flow: Any | None, store: Path | None = None, *,
                 theta: float = 0.3, mode: str = "legacy", host: str = "mcp") -> list[ProxiedRun]:
    """`run_episode` over several episodes; `flow` is a Flow, a path, or None (record only).

    `host` is the MCP client that drives the proxy: `mcp` (the `mcp` package's `Client`, in
    protocol era `mode`) or `openai-agents` (the SDK's `MCPServerStdio`, `scripted_sdk.py`)."""
    from stretto_core import Flow, save_flow

    if host not in HOSTS:
        raise ValueError(f"unknown host {host!r}: one of {', '.join(HOSTS)}")
    with tempfile.TemporaryDirectory(prefix="stretto-proxy-e2e-") as tmp:
        path: Path | None = None
        if isinstance(flow, Flow):
            path = Path(tmp) / "flow.json"
            save_flow(flow, path)
        elif flow is not None:
            path = Path(flow)
        folder = store or Path(tmp) / "sessions"
        if host == "mcp":
            return [asyncio.run(run_episode(s, path, folder, theta=theta, mode=mode)) for s in sessions]
        from stretto_mcp import scripted_sdk

        return [asyncio.run(scripted_sdk.run_episode(s, path, folder, theta=theta)) for s in sessions]
