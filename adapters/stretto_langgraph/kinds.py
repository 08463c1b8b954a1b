"""What a LangChain tool says of its own kind: read, write, or nothing.

LangChain has no read/write field of its own; `BaseTool.metadata` is where annotations travel
(langchain-mcp-adapters copies an MCP tool's annotations there, `readOnlyHint` and friends), and
where a user marks a plain `@tool` (`my_tool.metadata = {"readOnlyHint": True}`). A tool whose
metadata says nothing is left out of the manifest, so it stays of unknown kind and is never
looked up unless `reads=[...]` or a manifest file says otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from stretto_core import ToolKind, ToolManifest, kind_from_mcp_annotations

HINTS = ("readOnlyHint", "read_only_hint", "destructiveHint", "destructive_hint")
"""Metadata keys that carry a kind (the MCP wire form and the mcp SDK's snake_case form)."""


def tool_kind(tool: Any) -> ToolKind:
    """The kind a tool's own metadata claims: flat MCP hints, or an `annotations` mapping in it."""
    metadata = getattr(tool, "metadata", None)
    if not isinstance(metadata, Mapping):
        return ToolKind.generic
    nested = metadata.get("annotations")
    if isinstance(nested, Mapping) and any(k in nested for k in HINTS):
        return kind_from_mcp_annotations(nested)
    if any(k in metadata for k in HINTS):
        return kind_from_mcp_annotations(metadata)
    return ToolKind.generic


def manifest_of_tools(tools: Iterable[Any]) -> ToolManifest:
    """A manifest of the tools whose metadata names a kind; the others stay unknown."""
    reads: list[str] = []
    writes: list[str] = []
    for tool in tools:
        name = getattr(tool, "name", None)
        if not isinstance(name, str):
            continue  # a provider's built-in tool given as a dict: never ours to call
        kind = tool_kind(tool)
        if kind is ToolKind.read:
            reads.append(name)
        elif kind is ToolKind.write:
            writes.append(name)
    return ToolManifest.declare(reads=reads, writes=writes)
