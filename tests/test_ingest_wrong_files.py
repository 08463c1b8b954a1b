"""A wrong file given to ingest is refused in one short line: errors quote a snippet, never the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stretto_core.cli import main
from stretto_core.sessions.ingest import ingest_files


def test_a_tau2_file_given_as_workbench_is_refused_without_echoing_its_first_line(tmp_path: Path) -> None:
    wrong = tmp_path / "results.csv"
    wrong.write_text(json.dumps({"simulations": [{"messages": ["x" * 1000] * 3000}]}) + "\n")
    assert wrong.stat().st_size > 2_000_000
    report = ingest_files("workbench", [wrong], tmp_path / "out")
    [skipped] = report.skipped
    assert str(wrong) in skipped.message and len(skipped.message) < 400


def test_a_short_wrong_csv_names_its_first_line_in_a_snippet(tmp_path: Path) -> None:
    wrong = tmp_path / "results.csv"
    wrong.write_text("a," * 5000 + "b\n1,2\n")
    [skipped] = ingest_files("workbench", [wrong], tmp_path / "out").skipped
    assert "no query, full_response column" in skipped.message and len(skipped.message) < 400


def test_a_huge_sparse_file_is_refused_after_reading_only_its_head(tmp_path: Path) -> None:
    sparse = tmp_path / "sparse.csv"
    with open(sparse, "wb") as fh:
        fh.truncate(1 << 30)  # a gigabyte of holes: reading it whole would take a minute and fail
    [skipped] = ingest_files("workbench", [sparse], tmp_path / "out").skipped
    assert "binary" in skipped.message


def test_the_ingest_verb_says_what_it_could_not_read_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    wrong = tmp_path / "results.csv"
    wrong.write_text("x" * 3_000_000 + "\n")
    assert main(["ingest", "workbench", str(wrong), "--out", str(tmp_path / "out")]) != 0
    captured = capsys.readouterr()
    assert len(captured.out) + len(captured.err) < 2000
    assert str(wrong) in captured.err.strip().splitlines()[-1]
