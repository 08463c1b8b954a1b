"""The plugin with a real stdio MCP server (`mcp-server-git`) behind ADK's `McpToolset`.

The kinds come from the server's annotations alone: git_status and git_diff_unstaged say
`readOnlyHint: true`, git_create_branch says it is not read-only. The flow served is learned
from sessions that claim git_create_branch is a read and, after git_status, always look at the
unstaged diff and then create a branch: stretto must make the diff lookup and never create the
branch.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.mcp_tool import McpToolset, StdioConnectionParams
from mcp import StdioServerParameters

from adk_support import ScriptedLlm, function_responses, run_app, session_file, steps
from stretto_adk import RESULT_KEY, StrettoPlugin
from stretto_adk.tools import mcp_manifest
from stretto_core import Flow, Session, SessionHeader, Stretto, ToolCall, ToolManifest, learn_flow, read_session
from stretto_core.sessions.model import Lookup, LLMTurn, ToolResult, UserMessage


STATUS = "On branch master\nUntracked files:\n\tnew.txt"
WRITE = "git_create_branch"
BRANCH = "stretto-was-here"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.org", "-c", "user.name=t", *args],
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("git") / "repo"
    path.mkdir()
    git(path, "init", "-q")
    (path / "a.txt").write_text("hello\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-qm", "first")
    (path / "new.txt").write_text("not staged\n")
    return path


def git_toolset(repo: Path) -> McpToolset:
    return McpToolset(connection_params=StdioConnectionParams(
        server_params=StdioServerParameters(command=sys.executable,
                                            args=["-m", "mcp_server_git", "--repository", str(repo)]),
        timeout=30))


def staging_flow(listed: ToolManifest, repo: Path) -> Flow:
    """A flow that (wrongly) counts git_create_branch as a read: status, diff, then a new branch."""
    claims = listed.model_copy(deep=True)
    claims.tools[WRITE].kind = claims.tools["git_status"].kind
    made = []
    for n in range(10):
        calls = [("git_status", {"repo_path": str(repo)}, STATUS),
                 ("git_diff_unstaged", {"repo_path": str(repo)}, "Unstaged changes:\n"),
                 (WRITE, {"repo_path": str(repo), "branch_name": BRANCH}, f"Created branch '{BRANCH}'")]
        events: list[Any] = [UserMessage(text="stage my new file")]
        for i, (tool, args, text) in enumerate(calls):
            events += [LLMTurn(calls=[ToolCall(call_id=f"c{i}", tool=tool, arguments=args)]),
                       ToolResult(call_id=f"c{i}", tool=tool, content=text)]
        events.append(LLMTurn(text="staged"))
        made.append(Session(header=SessionHeader(session_id=f"git-{n}", harness="test", manifest=claims),
                            events=events))
    return learn_flow(made, constants=True)


@pytest.fixture(scope="module")
def listed(repo: Path) -> ToolManifest:
    """What the server lists, kinds from its annotations (one server start for the module)."""
    async def listing() -> ToolManifest:
        toolset = git_toolset(repo)
        try:
            return mcp_manifest(await toolset.get_tools())
        finally:
            await toolset.close()

    return asyncio.run(listing())


def test_the_flow_would_create_the_branch_if_told_the_write_is_a_read(repo: Path, listed: ToolManifest) -> None:
    """The control: served with no annotations and the write declared a read, it is looked up."""
    flow = staging_flow(listed, repo)
    live = Stretto(flow, reads=["git_status", WRITE, "git_diff_unstaged"], store=False).session()
    live.user("stage my new file")
    live.llm_turn(calls=[ToolCall(call_id="a", tool="git_status", arguments={"repo_path": str(repo)})])

    async def pretend(tool: str, args: dict[str, Any]) -> str:
        return "ok"

    asyncio.run(live.after_tool("a", "git_status", {"repo_path": str(repo)}, STATUS, pretend))
    assert WRITE in [lk.tool for lk in live.lookups]


@pytest.mark.parametrize("reads", [[], [WRITE]], ids=["annotations alone", "the write declared a read too"])
def test_a_write_on_a_real_mcp_server_is_never_looked_up(repo: Path, listed: ToolManifest, tmp_path: Path,
                                                         reads: list[str]) -> None:
    assert listed.is_read("git_status") and listed.is_write(WRITE)
    agent = LlmAgent(name="git", tools=[git_toolset(repo)],
                     model=ScriptedLlm(model="scripted-git",
                                       brain=steps([("git_status", {"repo_path": str(repo)})], "done")))
    store = tmp_path / "sessions"
    asyncio.run(run_app(agent, [StrettoPlugin(flow=staging_flow(listed, repo), reads=reads, store=store)],
                        ["stage my new file"]))

    assert BRANCH not in git(repo, "branch", "--list")
    session = read_session(session_file(store))
    assert session.header.manifest is not None and session.header.manifest.is_write(WRITE)
    lookups = [e for e in session.events if isinstance(e, Lookup)]
    assert [lk.tool for lk in lookups] == ["git_diff_unstaged"] and not lookups[0].error
    (seen,) = function_responses(agent.model.requests[1])
    assert "new.txt" in seen.response["content"][0]["text"]  # the server's own result, untouched
    assert "git_diff_unstaged" in seen.response[RESULT_KEY]
