"""`stretto proxy setup` prints each host's entry, and writes it only when asked, keeping the rest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")
from stretto_mcp import hosts  # noqa: E402


def _setup(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stretto_core", "proxy", "setup", *args, "--",
                           "mcp-server-git", "--repository", "/srv/repo"],
                          cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("host,relative,key", [("claude-code", ".mcp.json", "mcpServers"),
                                               ("cursor", ".cursor/mcp.json", "mcpServers"),
                                               ("vscode", ".vscode/mcp.json", "servers")])
def test_setup_prints_the_entry_and_writes_nothing_without_write(tmp_path: Path, host: str, relative: str,
                                                                 key: str) -> None:
    done = _setup(tmp_path, "--host", host, "--name", "git", "--flow", "f.json")
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout.split("\n", 1)[1].rsplit("\n# not written", 1)[0])[key]["git"]
    assert entry["args"][-4:] == ["--", "mcp-server-git", "--repository", "/srv/repo"]
    assert entry["args"][entry["args"].index("--flow") + 1] == str(tmp_path / "f.json")
    assert str(tmp_path / relative) in done.stdout and not (tmp_path / relative).exists()


def test_setup_write_keeps_the_other_servers_and_asks_unless_yes(tmp_path: Path) -> None:
    config = tmp_path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "keep": 1}))
    refused = _setup(tmp_path, "--host", "claude-code", "--name", "git", "--write")
    assert refused.returncode != 0 and json.loads(config.read_text())["mcpServers"].keys() == {"other"}
    done = _setup(tmp_path, "--host", "claude-code", "--name", "git", "--write", "--yes")
    assert done.returncode == 0, done.stderr
    written = json.loads(config.read_text())
    assert set(written["mcpServers"]) == {"other", "git"} and written["keep"] == 1
    assert written["mcpServers"]["git"]["type"] == "stdio" and (tmp_path / ".mcp.json.bak").exists()


def test_claude_desktop_reads_its_config_from_the_platforms_app_folder(tmp_path: Path) -> None:
    path = hosts.config_path("claude-desktop", home=tmp_path)
    assert path.name == "claude_desktop_config.json" and path.parent.name == "Claude"
    p = hosts.plan("claude-desktop", "git", ["python", "-m", "stretto_core", "proxy", "--", "s"], home=tmp_path)
    assert "type" not in p.entry and p.after == {"mcpServers": {"git": p.entry}}


def test_setup_refuses_a_flow_the_proxy_could_not_read(tmp_path: Path) -> None:
    (tmp_path / "binary.flow.json").write_bytes(bytes(range(256)))  # a flow not learned yet is fine; this is not
    done = _setup(tmp_path, "--host", "claude-code", "--name", "git", "--flow", "binary.flow.json")
    assert done.returncode == 2 and "binary.flow.json" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""



@pytest.mark.parametrize("option,named", [("--theta 5", "--theta must be a number in [0, 1]"),
                                          ("--theta abc", "Invalid value for '--theta'"),
                                          ("--per-call -1", "--per-call must be a whole number"),
                                          ("--lookup-timeout 0", "--lookup-timeout must be"),
                                          ("--tools ,", "--tools names no tool"),
                                          ("--upstream http://x", "not both or neither")])
def test_setup_refuses_a_proxy_option_value_the_proxy_would_refuse_at_every_start(
        tmp_path: Path, option: str, named: str) -> None:
    done = _setup(tmp_path, "--host", "cursor", "--name", "git", "--write", "--yes", f"--proxy-option={option}")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("stretto: --proxy-option: ") and named in done.stderr
    assert done.stderr.count("\n") == 1 and not (tmp_path / ".cursor").exists()


def test_setup_keeps_proxy_options_the_proxy_accepts_as_typed(tmp_path: Path) -> None:
    done = _setup(tmp_path, "--host", "cursor", "--name", "git", "--proxy-option=--theta 0.4 --per-call 2",
                  "--proxy-option=--shadow")
    assert done.returncode == 0, done.stderr
    args = json.loads(done.stdout.split("\n", 1)[1].rsplit("\n# not written", 1)[0])["mcpServers"]["git"]["args"]
    assert args[args.index("--theta"):args.index("--")] == ["--theta", "0.4", "--per-call", "2", "--shadow"]
