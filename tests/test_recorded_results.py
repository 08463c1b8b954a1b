"""Recorded sessions keep the agent's results whole up to a documented bound (1,000,000
characters), and a cut beyond it is marked (issue 26, item 10)."""

from __future__ import annotations

import json
from pathlib import Path

from stretto_core import Stretto, ToolManifest, read_session
RECORDED_RESULT_CHARS = 1_000_000
"""The bound docs/formats.md states (`serve.results.RECORDED_RESULT_CHARS`)."""


def _recorded(tmp_path: Path, output: str) -> object:
    stretto = Stretto(None, store=tmp_path, reads=["get_report"])
    live = stretto.session("s", tools=ToolManifest.declare(reads=["get_report"]))
    live.after_tool_sync("c1", "get_report", {}, output, lambda tool, args: "")
    live.close()
    [path] = tmp_path.glob("*.jsonl")
    [result] = [e for e in read_session(path).events if e.kind == "tool_result"]
    return result


def test_a_result_of_50_000_characters_is_recorded_whole(tmp_path: Path) -> None:
    output = json.dumps({"rows": ["r" * 100] * 480})
    assert len(output) > 45_000
    result = _recorded(tmp_path, output)
    assert result.content == output and result.cut is None
    assert result.parsed == {"rows": ["r" * 100] * 480}


def test_a_result_past_the_bound_is_cut_there_and_the_cut_is_marked(tmp_path: Path) -> None:
    output = "x" * (RECORDED_RESULT_CHARS + 1234)
    result = _recorded(tmp_path, output)
    assert result.cut == 1234
    assert result.content.startswith("x" * RECORDED_RESULT_CHARS)
    assert result.content.endswith("[... 1234 more characters cut by stretto]")
