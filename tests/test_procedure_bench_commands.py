"""The benchmark commands docs/procedures.md gives for the compiler's choice and its learning curve
are accepted, verbatim, by the benchmarks' own command lines (running them takes minutes and the
shared data: `benchmarks/procedures_cv.py` and `benchmarks/procedures_curve.py` are run by hand)."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "procedures.md"


def documented(script: str) -> list[str]:
    """Every command of the page that runs `benchmarks/<script>`, continuation lines joined."""
    text = DOC.read_text(encoding="utf-8").replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if f"benchmarks/{script}" in line and "python" in line]


@pytest.mark.parametrize("script", ["procedures_cv.py", "procedures_curve.py"])
def test_the_documented_benchmark_command_parses_with_the_benchmarks_own_options(script, monkeypatch):
    commands = documented(script)
    assert commands, f"docs/procedures.md gives no command for {script}"
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    module = importlib.import_module(script[:-3])
    for command in commands:
        words = shlex.split(command)
        args = module.build_parser().parse_args(words[words.index(f"benchmarks/{script}") + 1:])
        assert all(v in module.VARIANTS for v in args.variants), command
        assert re.match(r"STRETTO_DATA=\S+ python ", command), command
