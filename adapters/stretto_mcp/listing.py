"""The downstream's tool listing, pinned: which tools the proxy may look up, and why not the rest.

A lookup is made only of a tool that (1) the server's annotations mark read-only
(`readOnlyHint: true`, not destructive), (2) the flow's manifest marks read, (3) the operator's
allowlist names (when there is one) and the denylist does not, and (4) still has the input
schema it had when the proxy first saw it, and the contract the flow pinned when it was learned.
A tool that vanished from the listing, or is now marked a write, is never looked up again.
The one override is `--reads`: the operator may vouch for tools the server leaves unannotated;
an explicit annotation always wins over it.

After the server says its tools changed (`notifications/tools/list_changed`) the listing is
stale: no tool is looked up until a listing asked for after that notice has been read, however
long the server takes to answer (a slow listing means no lookups meanwhile, never the old one).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Iterable

from stretto_core import Flow, ToolKind, ToolManifest, contract_still_holds, manifest_from_mcp_tools

log = logging.getLogger("stretto.proxy")

LABEL_PREFIX = "proxy.refused."
"""Session header labels `proxy.refused.<tool>`: why a read of the flow is not looked up."""


def _schema_key(tool: dict[str, Any]) -> str:
    return json.dumps(tool.get("inputSchema"), sort_keys=True, default=str)


class Listing:
    """The tools as last listed, each one's schema pinned at its first listing."""

    def __init__(self, flow: Flow | None = None, *, reads: Iterable[str] = (),
                 allow: Iterable[str] | None = None, deny: Iterable[str] = ()) -> None:
        self.flow_manifest: ToolManifest | None = flow.served_manifest() if flow is not None else None
        self.vouched = frozenset(reads)
        self.allow = None if allow is None else frozenset(allow)
        self.deny = frozenset(deny)
        self.tools: dict[str, dict[str, Any]] = {}
        self.pinned: dict[str, str] = {}
        self.ever_read: set[str] = set()
        self.known = False
        self.notices = 0
        """Change notices the server sent (`notifications/tools/list_changed`)."""
        self.read_after = 0
        """How many of those notices the latest listing read was asked for after."""
        self._answers: dict[str, tuple[str, str] | None] = {}
        """`refusal` per tool for the listing as it is (cleared by `update`): asked before every
        lookup, it re-derived the tool's manifest and contract each time, a tenth of the proxy's
        CPU per call with a flow (`benchmarks/proxy_throughput.py`)."""

    @property
    def stale(self) -> bool:
        """The server changed its tools since the listing was asked for: nothing is a read now."""
        return self.read_after < self.notices

    def changed_notice(self) -> int:
        """The server says its tools changed: stale until a listing asked for from now on is read."""
        self.notices += 1
        return self.notices

    def update(self, tools: list[dict[str, Any]], asked_after: int | None = None) -> list[str]:
        """Take a complete listing; returns what changed for the log (empty on the first).

        `asked_after`: how many change notices had come when the listing was asked for (None:
        all of them, as an in-process listing read now); an older listing leaves the listing stale."""
        self.read_after = max(self.read_after, self.notices if asked_after is None else asked_after)
        listed = {t["name"]: t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}
        changes: list[str] = []
        if self.known:
            for name in sorted(set(self.tools) - set(listed)):
                changes.append(f"{name} is no longer listed")
            for name in sorted(set(listed) & set(self.tools)):
                if _schema_key(listed[name]) != _schema_key(self.tools[name]):
                    changes.append(f"{name}'s input schema changed")
                if self._annotated_kind(listed[name]) != self._annotated_kind(self.tools[name]):
                    changes.append(f"{name} is now marked {self._annotated_kind(listed[name]).value}")
            for name in sorted(set(listed) - set(self.tools)):
                changes.append(f"{name} is newly listed")
        for name, tool in listed.items():
            self.pinned.setdefault(name, _schema_key(tool))
        self.tools = listed
        self._answers = {}
        self.known = True
        for name in self.tools:
            if self._annotated_kind(self.tools[name]) is ToolKind.read:
                self.ever_read.add(name)
        return changes

    def _annotated_kind(self, tool: dict[str, Any]) -> ToolKind:
        kind = manifest_from_mcp_tools([tool]).kind(tool["name"])
        if kind is ToolKind.generic and tool["name"] in self.vouched:
            return ToolKind.read
        return kind

    def why_not(self, name: str) -> str | None:
        """Why `name` may not be looked up now, or None when it may (flow and server agree)."""
        refusal = self.refusal(name)
        return None if refusal is None else refusal[1]

    def refusal(self, name: str) -> tuple[str, str] | None:
        """`why_not` with the reason's code (a session's `refusal` event carries both; the codes are
        `Refusal.reason`'s, docs/formats.md)."""
        if self.stale:
            return "listing_stale", "the server changed its tools and their new listing has not been read yet"
        if name not in self._answers:
            self._answers[name] = self._refusal_now(name)
        return self._answers[name]

    def _refusal_now(self, name: str) -> tuple[str, str] | None:
        """`refusal` of a listing that is not stale, derived from it."""
        if name not in self.tools:
            return "unlisted", ("the server no longer lists it" if name in self.pinned else "the server does not list it")
        tool = self.tools[name]
        kind = self._annotated_kind(tool)
        if kind is ToolKind.write:
            return "marked_write", "the server marks it a write" + (" now" if name in self.ever_read else "")
        if kind is not ToolKind.read:
            return "not_read_only", "the server does not mark it read-only"
        if _schema_key(tool) != self.pinned.get(name):
            return "schema_changed", "its input schema changed since the proxy first listed it"
        if name in self.deny:
            return "denied", "the operator's denylist names it"
        if self.allow is not None and name not in self.allow:
            return "not_allowed", "the operator's allowlist leaves it out"
        if self.flow_manifest is not None:
            if not self.flow_manifest.is_read(name):
                return "not_in_flow", "the flow does not mark it read"
            pinned = getattr(self.flow_manifest.tools.get(name), "contract", None)
            now = manifest_from_mcp_tools([tool]).tools[name].contract
            if pinned is not None and now is not None and not contract_still_holds(pinned, now):
                return "contract_changed", "its input contract differs from the one the flow pinned"
        return None

    def manifest(self) -> ToolManifest:
        """The session's authority on kinds: read only where `why_not` finds nothing to object."""
        listed = manifest_from_mcp_tools(list(self.tools.values()))
        tools = {}
        for name, spec in listed.tools.items():
            kind = self._annotated_kind(self.tools[name])
            if kind is ToolKind.read and self.why_not(name) is not None:
                kind = ToolKind.generic
            tools[name] = spec.model_copy(update={"kind": kind})
        return ToolManifest(tools=tools)

    def refusals(self) -> dict[str, str]:
        """For each read of the flow the proxy will not look up: why (for the log and the header)."""
        return {name: text for name, (_, text) in self.coded_refusals().items()}

    def coded_refusals(self) -> dict[str, tuple[str, str]]:
        """`refusals` with each reason's code (for the session's `refusal` events)."""
        names = set(self.flow_manifest.reads()) if self.flow_manifest is not None else set(self.ever_read)
        out = {}
        for name in sorted(names):
            refusal = self.refusal(name)
            if refusal is not None:
                out[name] = refusal
        return out

    def labels(self) -> dict[str, str]:
        return {LABEL_PREFIX + name: reason for name, reason in self.refusals().items()}

    def has_output_schema(self, name: str) -> bool:
        return isinstance(self.tools.get(name, {}).get("outputSchema"), dict)
