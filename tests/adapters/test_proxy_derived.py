"""Through the proxy, the real mcp-server-git gets `git_show` looked up with the sha its own
`git_log` printed in free text and the repo the agent passed: a derived binding served live."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from proxy_support import PYTHON, proxy_command, read_session_files

pytest.importorskip("mcp_server_git")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from stretto_mcp.scripted import same_code_env  # noqa: E402

from stretto_core import ToolManifest, learn_flow, save_flow  # noqa: E402
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage  # noqa: E402

GIT_SERVER = shutil.which("mcp-server-git") or str(Path(PYTHON).parent / "mcp-server-git")
MANIFEST = ToolManifest.declare("mcp-git", reads=["git_log", "git_show", "git_status"], writes=["git_commit"])


def _repo(path: Path, messages: list[str]) -> list[str]:
    """A repository with one commit per message; its shas, newest first."""
    path.mkdir(parents=True)
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=path, check=True)
    for k, message in enumerate(messages):
        (path / f"f{k}.txt").write_text(message)
        subprocess.run(["git", "add", "."], cwd=path, check=True)
        subprocess.run(["git", "commit", "-qm", message], cwd=path, check=True)
    log = subprocess.run(["git", "log", "--format=%H"], cwd=path, check=True, capture_output=True, text=True)
    return log.stdout.split()


def _recorded(i: int, repo: str, shas: list[str]) -> Session:
    """An agent's session as the proxy records it: git_log, then git_show of the newest commit."""
    log = "Commit history:\n" + "\n".join(f"Commit: {s}\nAuthor: t\nDate: 2026-01-01\nMessage: m{k}\n"
                                          for k, s in enumerate(shas))
    events = [UserMessage(text="what changed lately?"),
              LLMTurn(calls=[ToolCall(call_id="1", tool="git_log", arguments={"repo_path": repo})]),
              ToolResult(call_id="1", tool="git_log", content=log),
              LLMTurn(calls=[ToolCall(call_id="2", tool="git_show", arguments={"repo_path": repo, "revision": shas[0]})]),
              ToolResult(call_id="2", tool="git_show", content=f"commit {shas[0]}\n")]
    return Session(header=SessionHeader(session_id=f"g{i}", harness="mcp-proxy", app="mcp-git", manifest=MANIFEST),
                   events=events)


async def _log(command: list[str], repo: Path) -> list[str]:
    params = StdioServerParameters(command=command[0], args=command[1:], env=same_code_env())
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        result = await client.call_tool("git_log", {"repo_path": str(repo)})
        return [getattr(b, "text", "") for b in result.content]


def test_git_show_is_looked_up_with_the_newest_listed_sha_and_the_repo_the_agent_passed(tmp_path: Path) -> None:
    sessions = []
    for i in range(8):
        fake = [f"{i:02d}{k}" + "ab" * 19 for k in range(3)]
        sessions.append(_recorded(i, str(tmp_path / f"recorded-repo-{i}"), fake))
    flow = learn_flow(sessions, MANIFEST)
    assert flow.table.lookups["git_show"].args["revision"].template == "{text git_log Commit: }"
    flow_path = tmp_path / "git.flow.json"
    save_flow(flow, flow_path)
    repo = tmp_path / "live"
    shas = _repo(repo, ["first", "second", "third"])
    store = tmp_path / "s"
    texts = anyio.run(_log, proxy_command([GIT_SERVER, "--repository", str(repo)], "--flow", str(flow_path),
                                          "--store", str(store)), repo)
    assert len(texts) == 2, "no lookup was appended to git_log's result"
    [session] = read_session_files(store)
    lookups = [e for e in session.events if e.kind == "lookup"]
    assert lookups[0].tool == "git_show"
    assert lookups[0].arguments == {"repo_path": str(repo), "revision": shas[0]}
    assert f"commit {shas[0]}" in lookups[0].content


def test_a_derived_value_far_longer_than_any_the_agents_passed_is_refused_not_looked_up(tmp_path: Path) -> None:
    """The argument contract still applies: trained on short repo paths, a long live one is refused."""
    sessions = [_recorded(i, f"/r{i}", [f"{i:02d}{k}" + "ab" * 19 for k in range(3)]) for i in range(8)]
    flow_path = tmp_path / "git.flow.json"
    save_flow(learn_flow(sessions, MANIFEST), flow_path)
    repo = tmp_path / ("a-rather-long-folder-name-" * 3) / "live"
    _repo(repo, ["first", "second"])
    store = tmp_path / "s"
    texts = anyio.run(_log, proxy_command([GIT_SERVER, "--repository", str(repo)], "--flow", str(flow_path),
                                          "--store", str(store)), repo)
    assert len(texts) == 1
    [session] = read_session_files(store)
    assert not [e for e in session.events if e.kind == "lookup"]
    text = session.model_dump_json()
    assert "argument_refused" in text and "repo_path is" in text, "the refusal was not recorded"
