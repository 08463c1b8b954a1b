"""`stretto proxy setup --write` edits a host's config in place and loses nothing: through a
symlink, keeping the file's mode (and the backup's), never replacing an entry without
`--replace`, refusing what it could not write back faithfully (issue 26, item 11)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")


def _setup(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stretto_core", "proxy", "setup", "--host", "claude-code",
                           "--name", "git", "--write", "--yes", *args, "--", "mcp-server-git"],
                          cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_symlinked_private_config_is_edited_through_the_link_and_stays_private(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "mcp.json"
    real.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    os.chmod(real, 0o600)
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").symlink_to(real)
    done = _setup(project)
    assert done.returncode == 0, done.stderr
    assert (project / ".mcp.json").is_symlink()
    assert json.loads(real.read_text())["mcpServers"].keys() == {"other", "git"}
    assert _mode(real) == 0o600 and _mode(dotfiles / "mcp.json.bak") == 0o600


def test_an_entry_of_the_same_name_is_replaced_only_with_replace(tmp_path: Path) -> None:
    config = tmp_path / ".mcp.json"
    mine = {"mcpServers": {"git": {"command": "my-own-git-server"}}}
    config.write_text(json.dumps(mine))
    refused = _setup(tmp_path)
    assert refused.returncode != 0 and "--replace" in refused.stderr and "Traceback" not in refused.stderr
    assert json.loads(config.read_text()) == mine
    done = _setup(tmp_path, "--replace")
    assert done.returncode == 0, done.stderr
    assert json.loads(config.read_text())["mcpServers"]["git"]["args"][-2:] == ["--", "mcp-server-git"]


@pytest.mark.parametrize("text,what", [('{"mcpServers": {}, "a": 1, "a": 2}', "twice"),
                                       ('{"mcpServers": {}, "limit": Infinity}', "Infinity"),
                                       ('{"mcpServers": {}, "limit": NaN}', "NaN")])
def test_a_config_that_would_not_survive_a_rewrite_is_left_alone(tmp_path: Path, text: str, what: str) -> None:
    config = tmp_path / ".mcp.json"
    config.write_text(text)
    done = _setup(tmp_path)
    assert done.returncode != 0 and what in done.stderr and "Traceback" not in done.stderr
    assert config.read_text() == text and not (tmp_path / ".mcp.json.bak").exists()


def test_a_new_config_is_private_and_valid_json(tmp_path: Path) -> None:
    done = _setup(tmp_path)
    assert done.returncode == 0, done.stderr
    config = tmp_path / ".mcp.json"
    assert _mode(config) == 0o600
    json.loads(config.read_text(), parse_constant=lambda name: pytest.fail(name))
