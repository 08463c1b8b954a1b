"""Tool manifests: kinds from MCP annotations, files and code; a tool of unknown kind is never a read."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from shared_data import published_data

from stretto_core.sessions.manifest import (ManifestError, ToolKind, ToolManifest, contracts_from_calls,
                                   kind_from_mcp_annotations, load_manifest, manifest_from_mcp_tools)
from stretto_core.paths import data_root


def test_read_only_hint_makes_a_read_false_a_write_and_its_absence_generic() -> None:
    assert kind_from_mcp_annotations({"readOnlyHint": True}) is ToolKind.read
    assert kind_from_mcp_annotations({"readOnlyHint": False}) is ToolKind.write
    assert kind_from_mcp_annotations({}) is ToolKind.generic
    assert kind_from_mcp_annotations(None) is ToolKind.generic
    assert kind_from_mcp_annotations({"readOnlyHint": True, "destructiveHint": True}) is ToolKind.write


def test_a_real_mcp_git_server_lists_its_reads_and_writes(tmp_path: Path) -> None:
    import mcp
    from mcp import StdioServerParameters

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "mcp_server_git", "--repository", str(tmp_path)])

    async def listing():
        async with mcp.Client(params) as client:
            return (await client.list_tools()).tools

    manifest = manifest_from_mcp_tools(asyncio.run(listing()), app="git")
    assert manifest.is_read("git_status") and manifest.is_read("git_log")
    assert manifest.is_write("git_commit") and manifest.is_write("git_reset")
    assert not manifest.is_read("git_add")
    assert "repo_path" in manifest.tools["git_status"].contract.required


@published_data
def test_the_shipped_benchmark_manifests_load_with_their_kinds() -> None:
    retail = load_manifest(data_root() / "manifests" / "tau2-retail.json")
    assert retail.app == "tau2/retail"
    assert retail.is_read("get_order_details") and retail.is_write("cancel_pending_order")
    assert retail.kind("calculate") is ToolKind.generic and not retail.is_read("transfer_to_human_agents")
    workspace = load_manifest(data_root() / "manifests" / "agentdojo-workspace.json")
    assert workspace.is_write("get_unread_emails"), "it marks emails read, so it is a write"


def test_a_manifest_declared_in_code_keeps_the_safer_kind_of_a_tool_named_twice() -> None:
    m = ToolManifest.declare("shop", reads=["get", "refund"], writes=["refund"])
    assert m.is_read("get") and m.is_write("refund")
    assert not m.is_read("unknown_tool")


def test_merging_manifests_that_disagree_keeps_the_kind_that_calls_less() -> None:
    a = ToolManifest.declare(reads=["t"])
    b = ToolManifest.declare(writes=["t"])
    assert a.merged(b).is_write("t") and b.merged(a).is_write("t")


def test_contracts_observed_from_calls_mark_arguments_passed_nine_times_in_ten_as_required() -> None:
    calls = [("get", {"id": "1", "verbose": True})] + [("get", {"id": str(i)}) for i in range(9)]
    contract = contracts_from_calls(calls)["get"]
    assert contract.args == {"id": "string", "verbose": "boolean"}
    assert contract.required == ["id"]


def test_a_malformed_manifest_file_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ManifestError, match="bad.json"):
        load_manifest(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"tools": {"t": "maybe"}}))
    with pytest.raises(ManifestError, match="wrong.json"):
        load_manifest(wrong)
