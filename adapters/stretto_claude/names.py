"""Tool names both ways: what the model calls (`mcp__<server>__<tool>`) and what sessions record.

Claude Code shows each MCP tool to the model as `mcp__<server>__<tool>`, with every character
outside `[A-Za-z0-9_-]` of both parts turned into `_`. stretto records the tool's own (bare)
name, so a session from this harness reads like one from any other, and a flow learned
elsewhere serves here unchanged. A bare name two servers share is ambiguous: it is recorded as
the model saw it and never looked up; so is an external (stdio, http) server's tool whose bare
name is an in-process tool's (`mcp__ext__find_ticket` is not the in-process `find_ticket`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
PREFIX = "mcp__"


def normalize(part: str) -> str:
    """One part of an MCP tool's exposed name, as Claude Code writes it."""
    return _UNSAFE.sub("_", part)


def exposed_name(server: str, tool: str) -> str:
    """The name the model calls: `mcp__<server>__<tool>`."""
    return f"{PREFIX}{normalize(server)}__{normalize(tool)}"


@dataclass(frozen=True)
class Route:
    """Where a bare tool name is served: the server's configured name and the tool's own name."""

    server: str
    tool: str


@dataclass
class ToolNames:
    """The map between exposed names and bare names for a set of servers and their tools."""

    servers: tuple[str, ...] = ()
    _bare_of: dict[str, str] = field(default_factory=dict)      # exposed -> bare
    _route: dict[str, Route] = field(default_factory=dict)      # bare -> where to call it
    _ambiguous: set[str] = field(default_factory=set)

    @classmethod
    def build(cls, servers: Iterable[str], tools: dict[str, list[str]]) -> "ToolNames":
        """`servers`: every configured server name; `tools`: the listed tools of the callable ones."""
        names = cls(servers=tuple(sorted(servers, key=lambda s: -len(normalize(s)))))
        seen: dict[str, Route] = {}
        for server, listed in tools.items():
            for tool in listed:
                if tool in seen and seen[tool] != Route(server, tool):
                    names._ambiguous.add(tool)
                seen[tool] = Route(server, tool)
        for server, listed in tools.items():
            for tool in listed:
                exposed = exposed_name(server, tool)
                if tool in names._ambiguous:
                    names._bare_of[exposed] = exposed
                else:
                    names._bare_of[exposed] = tool
                    names._route[tool] = Route(server, tool)
        return names

    def bare(self, name: str) -> str:
        """The name a session records for the tool the model called `name`."""
        known = self._bare_of.get(name)
        if known is not None:
            return known
        if name.startswith(PREFIX):
            for server in self.servers:  # a server we cannot call (stdio, http): strip its prefix
                prefix = f"{PREFIX}{normalize(server)}__"
                if name.startswith(prefix) and len(name) > len(prefix):
                    bare = name[len(prefix):]
                    # never the name of an in-process tool: an external server's `find_ticket` is
                    # not ours, so it keeps its full name (and is never taken for ours, nor looked up)
                    return name if bare in self._route or bare in self._ambiguous else bare
        return name  # a built-in tool (Bash, Read, ...) keeps its name

    def route(self, bare: str) -> Route | None:
        """Where to call a bare tool name, or None when no in-process server serves it alone."""
        return self._route.get(bare)

    def callable(self) -> list[str]:
        """Every bare name a lookup can be made of."""
        return sorted(self._route)

    @property
    def ambiguous(self) -> set[str]:
        return set(self._ambiguous)
