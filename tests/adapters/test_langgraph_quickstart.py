"""The LangGraph quickstart runs offline, records, learns, and saves turns with the flow it learned."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "langgraph_quickstart.py"


def test_the_quickstart_runs_with_no_key_and_takes_fewer_turns_with_stretto(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(QUICKSTART), run_name="__main__")
    out = capsys.readouterr().out
    match = re.search(r"(\d+) without stretto -> (\d+) with it", out)
    assert match is not None, out
    without, with_stretto = int(match[1]), int(match[2])
    assert 0 < with_stretto < without
    assert "[stretto " in out and '"tier": "gold"' in out  # the customer rode inside the order's result
