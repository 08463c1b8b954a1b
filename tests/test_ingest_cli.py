"""`stretto ingest` writes the sessions, prints what it read and skipped, and fails only on nothing read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stretto_core.cli import main
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.manifest import ToolKind
from stretto_core.paths import data_root
from stretto_core.sessions.store import read_session

RUNS = data_root() / "agentdojo" / "runs"
RUN = "gpt-4o-2024-05-13/banking/user_task_0.json"
needs_data = pytest.mark.skipif(not RUNS.is_dir(), reason="the shared AgentDojo runs are not here")


def copy_run(tmp_path: Path, rel: str = RUN) -> Path:
    out = tmp_path / "runs" / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(RUNS / rel, out)
    return out


@needs_data
def test_the_cli_ingests_a_folder_prints_the_counts_and_writes_the_json_summary(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_run(tmp_path)
    (tmp_path / "runs" / "notes.json").write_text("[1, 2", encoding="utf-8")
    code = main(["ingest", "agentdojo", str(tmp_path / "runs"), "--out", str(tmp_path / "out"),
                 "--json", str(tmp_path / "summary.json")])
    printed = capsys.readouterr().out
    assert code == 0
    assert "1 of 2 files read, 1 episodes, 3 LLM turns, 2 tool calls" in printed
    assert "[unreadable file]" in printed and "notes.json:1" in printed
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["totals"]["tool_calls"] == 2 and summary["skipped"][0]["line"] == 1
    assert len(list((tmp_path / "out").glob("*.jsonl"))) == 1


def test_the_cli_exits_non_zero_when_nothing_could_be_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    assert main(["ingest", "tau2", str(tmp_path / "broken.json"), "--out", str(tmp_path / "out")]) != 0
    assert main(["ingest", "tau2", str(tmp_path / "missing.json"), "--out", str(tmp_path / "out")]) != 0
    assert "no such file or directory" in capsys.readouterr().out


@needs_data
def test_a_manifest_given_on_the_command_line_replaces_the_shipped_one(tmp_path: Path) -> None:
    path = copy_run(tmp_path)
    override = tmp_path / "kinds.json"
    override.write_text(json.dumps({"tools": {"read_file": "write", "get_balance": "read"}}), encoding="utf-8")
    ingest_files("agentdojo", [path], tmp_path / "out", manifest=override)
    [file] = (tmp_path / "out").glob("*.jsonl")
    manifest = read_session(file).header.manifest
    assert manifest.kind("read_file") is ToolKind.write and manifest.is_read("get_balance")
    assert sorted(manifest.tools) == ["get_balance", "read_file"], "nothing of the shipped manifest is kept"
    assert manifest.app == "agentdojo/banking"


def test_a_bad_manifest_override_is_one_line_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "kinds.json"
    bad.write_text("{}", encoding="utf-8")
    code = main(["ingest", "tau2", str(tmp_path), "--out", str(tmp_path / "out"), "--manifest", str(bad)])
    assert code == 2 and str(bad) in capsys.readouterr().err
