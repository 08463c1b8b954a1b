"""Through the proxy, the real mcp-server-git looks exactly as it does without it, and its writes
are never looked up."""

from __future__ import annotations

import json
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


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=path, check=True)
    (path / "a.txt").write_text("hello\n")
    subprocess.run(["git", "add", "a.txt"], cwd=path, check=True)
    subprocess.run(["git", "commit", "-qm", "first"], cwd=path, check=True)
    (path / "a.txt").write_text("hello again\n")
    return path


def _params(command: list[str]) -> StdioServerParameters:
    return StdioServerParameters(command=command[0], args=command[1:], env=same_code_env())


async def _what_the_host_sees(command: list[str], mode: str, repo: Path) -> dict:
    async with Client(_params(command), mode=mode) as client:
        tools = await client.list_tools()
        status = await client.call_tool("git_status", {"repo_path": str(repo)})
        return {"tools": [t.model_dump(by_alias=True, exclude_none=True) for t in tools.tools],
                "resources": (await client.list_resources()).model_dump(by_alias=True, exclude_none=True),
                "prompts": (await client.list_prompts()).model_dump(by_alias=True, exclude_none=True),
                "status": status.model_dump(by_alias=True, exclude_none=True)}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_host_sees_the_same_tools_schemas_annotations_resources_and_prompts(repo: Path, tmp_path: Path,
                                                                               mode: str) -> None:
    server = [GIT_SERVER, "--repository", str(repo)]
    direct = anyio.run(_what_the_host_sees, server, mode, repo)
    proxied = anyio.run(_what_the_host_sees, proxy_command(server, "--store", str(tmp_path / "s")), mode, repo)
    assert proxied == direct
    assert {t["name"] for t in direct["tools"]} >= {"git_status", "git_log", "git_commit", "git_add"}
    assert any(t.get("annotations", {}).get("readOnlyHint") is False for t in direct["tools"])
    [session] = read_session_files(tmp_path / "s")
    assert session.header.app == "mcp-git" and session.header.harness == "mcp-proxy"
    assert [e.kind for e in session.events] == ["llm_turn", "tool_result"]
    assert "hello again" not in session.events[1].content  # status shows the change, not the file


def _git_sessions(repo: Path, count: int = 8) -> list[Session]:
    """Sessions where the agent calls git_status, git_add, then git_status and git_log."""
    manifest = ToolManifest.declare("git", reads=["git_status", "git_log", "git_add"], writes=["git_commit"])
    out = []
    arguments = {"repo_path": str(repo)}
    for i in range(count):
        steps = [("git_add", {**arguments, "files": ["a.txt"]}), ("git_status", arguments), ("git_log", arguments),
                 ("git_commit", {**arguments, "message": "m"})]
        events: list = [UserMessage(text="commit my change")]
        for n, (tool, args) in enumerate(steps):
            events += [LLMTurn(calls=[ToolCall(call_id=f"c{n}", tool=tool, arguments=args)]),
                       ToolResult(call_id=f"c{n}", tool=tool, content=f"{tool} output")]
        out.append(Session(header=SessionHeader(session_id=f"git-{i}", harness="test", app="git", manifest=manifest),
                           events=events))
    return out


def _flow(repo: Path, tmp_path: Path, pinned_log_schema: dict | None = None) -> Path:
    """A flow that (wrongly) believes git_add is a read, and looks up git_status and git_log."""
    manifest = ToolManifest.declare("git", reads=["git_status", "git_log", "git_add"], writes=["git_commit"])
    if pinned_log_schema is not None:
        from stretto_core.sessions.manifest import InputContract

        spec = manifest.tools["git_log"].model_copy(update={"contract": InputContract(**pinned_log_schema)})
        manifest.tools["git_log"] = spec
    path = tmp_path / "git.flow.json"
    save_flow(learn_flow(_git_sessions(repo), manifest, constants=True), path)
    return path


STATUS_ADD_STATUS = (("git_status", {}), ("git_add", {"files": ["a.txt"]}), ("git_status", {}))


async def _session_of_calls(command: list[str], repo: Path, calls=STATUS_ADD_STATUS) -> list[list[str]]:
    async with Client(_params(command), mode="legacy") as client:
        await client.list_tools()
        texts = []
        for tool, extra in calls:
            result = await client.call_tool(tool, {"repo_path": str(repo), **extra})
            texts.append([getattr(b, "text", "") for b in result.content])
        return texts


def test_a_write_is_never_looked_up_even_when_the_flow_calls_it_a_read(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "s"
    command = proxy_command([GIT_SERVER, "--repository", str(repo)], "--flow", str(_flow(repo, tmp_path)),
                            "--store", str(store), "--theta", "0.05")
    anyio.run(_session_of_calls, command, repo)
    [session] = read_session_files(store)
    looked_up = [e.tool for e in session.events if e.kind == "lookup"]
    assert looked_up, "the flow made no lookup at all: the test would prove nothing"
    assert "git_add" not in looked_up and "git_commit" not in looked_up
    assert set(looked_up) <= {"git_status", "git_log"}
    assert session.header.labels["proxy.refused.git_add"] == "the server marks it a write"


def test_a_changed_contract_stops_lookups_of_that_tool_and_the_record_says_why(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "s"
    old_contract = {"args": {"repo_path": "string", "branch": "string"}, "required": ["branch", "repo_path"]}
    flow = _flow(repo, tmp_path, pinned_log_schema=old_contract)
    command = proxy_command([GIT_SERVER, "--repository", str(repo)], "--flow", str(flow), "--store", str(store),
                            "--theta", "0.05")
    anyio.run(_session_of_calls, command, repo, (("git_add", {"files": ["a.txt"]}),))
    [session] = read_session_files(store)
    looked_up = [e.tool for e in session.events if e.kind == "lookup"]
    assert "git_log" not in looked_up
    assert "git_status" in looked_up, "no other lookup was made: the test would prove nothing"
    assert session.header.labels["proxy.refused.git_log"] == "its input contract differs from the one the flow pinned"
    assert json.loads(flow.read_text())  # the flow itself is untouched and readable
