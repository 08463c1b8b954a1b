"""The ADK quickstart runs offline and saves turns."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "adk_quickstart.py"


def test_the_quickstart_runs_with_no_key_and_takes_fewer_turns_with_stretto(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(QUICKSTART), run_name="__main__")
    match = re.search(r"without -> with stretto: (\d+) -> (\d+)", capsys.readouterr().out)
    assert match is not None
    without, with_stretto = int(match[1]), int(match[2])
    assert 0 < with_stretto < without
