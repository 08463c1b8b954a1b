"""Which of an agent's tools stretto may call on its own, and what the SDK says of their kinds.

A tool is looked up only if it is a known read (the core's rule) *and* calling it directly would
skip nothing the SDK would otherwise do for it: a tool that needs approval, has input or output
guardrails, or runs another agent is never looked up, and neither is a tool on an MCP server that
asks for approval or guards its tools. Kinds the SDK itself carries come from MCP annotations
(`FunctionTool.mcp_annotations`, the server's `tools/list`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agents import FunctionTool
from agents.mcp import MCPServer
from stretto_core import ToolKind, ToolManifest, kind_from_mcp_annotations, manifest_from_mcp_tools


def why_not_carrier(tool: FunctionTool) -> str | None:
    """Why this tool's own result cannot carry lookups (so it is not wrapped), or None."""
    if tool.needs_approval is not False:
        return "it needs approval (its invoker stays the SDK's own)"
    if tool.output_json_schema is not None or getattr(tool, "_output_type_adapter", None) is not None:
        return "its output has a JSON schema text cannot be appended to"
    if getattr(tool, "_is_agent_tool", False) or getattr(tool, "_is_codex_tool", False):
        return "it runs another agent"
    return None


def why_not_target(tool: FunctionTool) -> str | None:
    """Why stretto never calls this tool itself, or None."""
    if tool.needs_approval is not False:
        return "it needs approval"
    if tool.tool_input_guardrails or tool.tool_output_guardrails:
        return "it has guardrails a direct call would skip"
    if getattr(tool, "_is_agent_tool", False) or getattr(tool, "_is_codex_tool", False):
        return "it runs another agent"
    return None


def server_blocks_lookups(server: MCPServer, tool: str) -> bool:
    """Whether an MCP server's own policy (approval, guardrails) rules out calling `tool` directly."""
    if getattr(server, "tool_input_guardrails", None) or getattr(server, "tool_output_guardrails", None):
        return True
    policy = getattr(server, "_needs_approval_policy", False)
    if isinstance(policy, Mapping):
        return bool(policy.get(tool, False))
    return policy is not False


def _said(manifest: ToolManifest) -> ToolManifest:
    """Only the kinds annotations actually state: a tool with no hint says nothing (it must not
    override a read declared in code, since on a clash the safer kind wins)."""
    return ToolManifest(app=manifest.app, tools={n: s for n, s in manifest.tools.items()
                                                 if s.kind is not ToolKind.generic})


def function_tool_manifest(tools: Iterable[FunctionTool]) -> ToolManifest:
    """Kinds from the MCP annotations some function tools carry; untargetable tools are generic."""
    tools = list(tools)
    kinds = {t.name: kind_from_mcp_annotations(getattr(t, "mcp_annotations", None)) for t in tools}
    return ToolManifest.declare(reads=[n for n, k in kinds.items() if k is ToolKind.read],
                                writes=[n for n, k in kinds.items() if k is ToolKind.write],
                                generic=[t.name for t in tools if why_not_target(t) is not None])


def listed_manifest(listed: Mapping[str, tuple[MCPServer, Any]]) -> ToolManifest:
    """Kinds of the MCP tools one run was shown, from their annotations."""
    manifest = _said(manifest_from_mcp_tools([tool for _, tool in listed.values()]))
    never = [name for name, (server, _) in listed.items() if server_blocks_lookups(server, name)]
    return manifest.merged(ToolManifest.declare(generic=never))


def absent_reads(authority: ToolManifest, present: Iterable[str]) -> ToolManifest:
    """Declared reads this agent does not have: generic, so no lookup of them is ever tried."""
    have = set(present)
    return ToolManifest.declare(generic=[t for t in authority.reads() if t not in have])
