"""Host setup: the config entry that puts the proxy in front of a server, for four MCP hosts.

Each host keeps its MCP servers in a JSON file (from each host's public documentation):

- Claude Code: `.mcp.json` in the project (scope `project`) or `~/.claude.json` (scope `user`),
  under `mcpServers`, entries `{"type": "stdio", "command", "args", "env"}`.
- Claude Desktop: `claude_desktop_config.json` in `~/Library/Application Support/Claude/`
  (macOS), `%APPDATA%\\Claude\\` (Windows), `~/.config/Claude/` (Linux), under `mcpServers`.
- Cursor: `.cursor/mcp.json` in the project or `~/.cursor/mcp.json` (scope `user`), under
  `mcpServers`.
- VS Code: `.vscode/mcp.json` in the workspace or the user profile's `mcp.json`, under
  `servers`, entries `{"type": "stdio", "command", "args"}`.

`plan(...)` computes the file and its new content without touching anything; `write_plan`
writes it (keeping every other key and server), after the CLI asked for consent.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

HOSTS = ("claude-code", "claude-desktop", "cursor", "vscode")


@dataclass
class Plan:
    host: str
    path: Path
    key: str
    name: str
    entry: dict[str, Any]
    before: dict[str, Any]
    after: dict[str, Any]

    def snippet(self) -> str:
        """The part of the config this setup adds, as JSON to paste by hand."""
        return json.dumps({self.key: {self.name: self.entry}}, indent=2)


def _app_support(home: Path) -> Path:
    if sys.platform == "darwin":
        return home / "Library" / "Application Support"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", home / "AppData" / "Roaming"))
    return Path(os.environ.get("XDG_CONFIG_HOME", home / ".config"))


def config_path(host: str, scope: str = "project", *, project: Path | None = None,
                home: Path | None = None) -> Path:
    """Where `host` reads its MCP servers for `scope` (`project` or `user`)."""
    home = home or Path.home()
    project = project or Path.cwd()
    if host == "claude-code":
        return project / ".mcp.json" if scope == "project" else home / ".claude.json"
    if host == "claude-desktop":
        return _app_support(home) / "Claude" / "claude_desktop_config.json"
    if host == "cursor":
        return project / ".cursor" / "mcp.json" if scope == "project" else home / ".cursor" / "mcp.json"
    if host == "vscode":
        if scope == "project":
            return project / ".vscode" / "mcp.json"
        return _app_support(home) / "Code" / "User" / "mcp.json"
    raise ValueError(f"unknown host {host!r}; hosts: {', '.join(HOSTS)}")


def proxy_command(server_command: Sequence[str], proxy_args: Sequence[str] = (),
                  launcher: Sequence[str] | None = None) -> list[str]:
    """The command line a host runs: `<python> -m stretto_core proxy [options] -- <server command>`.

    The launcher is this Python by its absolute path, since hosts start servers with a bare PATH.
    """
    head = list(launcher) if launcher else [sys.executable, "-m", "stretto_core"]
    return [*head, "proxy", *proxy_args, "--", *server_command]


def entry_for(host: str, command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": command[0], "args": command[1:]}
    if host in ("claude-code", "vscode"):
        entry = {"type": "stdio", **entry}
    if env:
        entry["env"] = dict(env)
    return entry


def plan(host: str, name: str, command: list[str], *, scope: str = "project", env: dict[str, str] | None = None,
         project: Path | None = None, home: Path | None = None) -> Plan:
    """What setup would write; reads the current file (a missing one is empty) and changes nothing."""
    if not name:
        raise ValueError("a server name is needed (--name)")
    path = config_path(host, scope, project=project, home=home)
    key = "servers" if host == "vscode" else "mcpServers"
    before: dict[str, Any] = {}
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if text.strip():
            try:
                before = json.loads(text)
            except ValueError as exc:
                raise ValueError(f"{path} is not valid JSON ({exc}); fix it or add the entry by hand") from exc
        if not isinstance(before, dict):
            raise ValueError(f"{path} does not hold a JSON object")
    entry = entry_for(host, command, env)
    after = dict(before)
    servers = dict(after.get(key) or {})
    servers[name] = entry
    after[key] = servers
    return Plan(host, path, key, name, entry, before, after)


def write_plan(p: Plan) -> Path:
    """Write the planned config, keeping a copy of the old file beside it (`.bak`). A config that
    is new is made 0600 (it may hold a server's environment); one rewritten keeps its mode, and its
    backup is 0600 (`stretto_core.private`)."""
    from stretto_core.private import FILE_MODE, write_private_bytes, write_private_text

    if p.path.exists():
        write_private_bytes(p.path.with_name(p.path.name + ".bak"), p.path.read_bytes(), FILE_MODE)
    write_private_text(p.path, json.dumps(p.after, indent=2) + "\n")
    return p.path
