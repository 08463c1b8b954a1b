"""MCP servers under the OpenAI Agents adapter: real stdio servers, kinds from their annotations.

The toy shop runs as a stdio MCP server that logs every call it serves; `mcp-server-git` runs on
a scratch repository. No `reads=` is declared for MCP tools: their `readOnlyHint` is the authority.
"""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

from openai_support import (READS, Shop, list_repos_tool, mcp_shop, order_then_done, outputs_seen, repo_flow,
                            scripted_agent, served_calls, shop_flow)

from agents import Runner
from agents.testing import assistant_message, function_call
from stretto_core import Stretto, ToolCall, ToolManifest
from stretto_openai_agents import instrument, runtime_of

ORDER_O5 = '{"order_id": "O5", "customer_id": "C5", "status": "shipped"}'


async def run_with(server: Any, agent: Any, text: str = "Please refund order O5.") -> None:
    async with server:
        await Runner.run(agent, text)


def test_an_mcp_tools_result_carries_the_lookup_as_one_more_text_block(tmp_path: Any) -> None:
    log = str(tmp_path / "shop.log")
    server = mcp_shop(log)
    agent, model = scripted_agent([], order_then_done(), mcp_servers=[server])
    agent = instrument(agent, flow=shop_flow(), store=tmp_path)  # kinds from the server's annotations
    asyncio.run(run_with(server, agent))
    parts = outputs_seen(model, 1)["call-1"]
    assert [p["text"] for p in parts][0] == ORDER_O5
    assert 'get_customer {"customer_id": "C5"}:\n{"customer_id": "C5", "tier": "gold"}' in parts[1]["text"]
    assert served_calls(log) == ["get_order", "get_customer"]
    session = runtime_of(agent).sessions[-1]
    assert session.tools.is_read("get_customer") and session.tools.is_write("refund")


def test_an_mcp_write_is_never_looked_up_even_when_declared_read_and_predicted(tmp_path: Any) -> None:
    log = str(tmp_path / "shop.log")
    server = mcp_shop(log)
    agent, model = scripted_agent([], order_then_done(), mcp_servers=[server])
    agent = instrument(agent, flow=_refund_read_flow(), reads=["get_order", "refund"], store=tmp_path)
    asyncio.run(run_with(server, agent))
    assert served_calls(log) == ["get_order"]
    assert outputs_seen(model, 1)["call-1"][0]["text"] == ORDER_O5 and len(outputs_seen(model, 1)["call-1"]) == 1
    # Control: the same flow, with refund a function tool declared read, does look it up.
    shop = Shop()
    control, _ = scripted_agent(shop.tools(), order_then_done())
    control = instrument(control, flow=_refund_read_flow(), reads=["get_order", "refund"], store=tmp_path)
    asyncio.run(Runner.run(control, "Please refund order O5."))
    assert shop.names() == ["get_order", "refund"]


def _refund_read_flow() -> Any:
    """A flow whose sessions called `refund` a read, predicting it after every order."""
    return shop_flow(then="refund", manifest=ToolManifest.declare(reads=["get_order", "refund"]))


def scratch_repo(tmp_path: Any) -> str:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "README").write_text("hello\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "the first commit"], check=True)
    return str(repo)


def listing_then_done() -> list[Any]:
    return [[function_call("list_repos", {}, call_id="call-1")], [assistant_message("Done.")]]


async def served_by_git(server: Any, repo: str, then: str, reads: list[str], **extra: Any) -> Any:
    """Run the scripted agent once against mcp-server-git with a flow predicting `then`."""
    async with server:
        flow = repo_flow(then, await server.list_tools(), **extra)
        agent, model = scripted_agent([list_repos_tool(repo)], listing_then_done(), mcp_servers=[server])
        agent = instrument(agent, flow=flow, reads=reads, store=repo + "-sessions")
        await Runner.run(agent, "What changed in my project lately?")
        return agent, model, flow


def test_mcp_server_git_reads_are_looked_up_through_the_real_server(tmp_path: Any) -> None:
    from openai_support import git_server

    repo = scratch_repo(tmp_path)
    agent, model, _ = asyncio.run(served_by_git(git_server(repo), repo, "git_log", ["list_repos"]))
    seen = outputs_seen(model, 1)["call-1"]
    assert f'git_log {{"repo_path": "{repo}"}}:' in seen and "the first commit" in seen
    [lookup] = runtime_of(agent).sessions[-1].lookups
    assert lookup.tool == "git_log" and not lookup.error


def test_mcp_server_git_never_gets_a_write_from_stretto(tmp_path: Any) -> None:
    from openai_support import git_server

    repo = scratch_repo(tmp_path)
    # Served against the real server, whose annotations say it writes: never called, even declared read.
    agent, model, flow = asyncio.run(served_by_git(git_server(repo), repo, "git_create_branch",
                                                   ["list_repos", "git_create_branch"], branch_name="stretto-was-here"))
    branches = subprocess.run(["git", "-C", repo, "branch", "--list"], capture_output=True, text=True, check=True)
    assert "stretto-was-here" not in branches.stdout
    assert runtime_of(agent).sessions[-1].lookups == []
    assert runtime_of(agent).sessions[-1].tools.is_write("git_create_branch")
    # The flow does propose the write wherever nothing says it writes: the check above can fail.
    probe = Stretto(flow, reads=["list_repos", "git_create_branch"], store=False).session()
    probe.llm_turn(calls=[ToolCall(call_id="x", tool="list_repos", arguments={})])
    proposed: list[str] = []

    async def record(name: str, args: dict[str, Any]) -> str:
        proposed.append(name)
        return "ok"

    asyncio.run(probe.after_tool("x", "list_repos", {}, f'{{"repos": [{{"path": "{repo}"}}]}}', record))
    assert proposed == ["git_create_branch"]


def test_calls_outside_a_run_pass_through_the_wrapped_server_untouched(tmp_path: Any) -> None:
    log = str(tmp_path / "shop.log")
    server = mcp_shop(log)
    agent, _ = scripted_agent([], order_then_done(), mcp_servers=[server])
    agent = instrument(agent, flow=shop_flow(), reads=READS, store=tmp_path)
    wrapped = agent.mcp_servers[0]

    async def direct() -> Any:
        async with server:
            return await wrapped.call_tool("get_order", {"order_id": "O5"})

    result = asyncio.run(direct())
    assert [c.text for c in result.content] == [ORDER_O5]
    assert served_calls(log) == ["get_order"]
