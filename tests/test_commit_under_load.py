"""Commits and rollbacks while another process starts sessions: no session ever reads a partial
flow, and the check does catch a writer that is not atomic. (`benchmarks/commit_under_load.py`
runs the same with 1,000 commits and prints the figures.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "commit_under_load.py"


def bench():
    spec = importlib.util.spec_from_file_location("commit_under_load", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_session_reads_a_partial_flow_while_versions_are_committed_and_rolled_back(tmp_path: Path) -> None:
    result = bench().run(commits=120, rollback_every=10, root=tmp_path / "shop")
    assert result["partial_reads"] == 0 and result["load_failures"] == 0
    assert result["versions_written"] == 120 and result["rollbacks"] == 11
    assert result["versions_seen_by_sessions"] > 1 and result["raw_reads"] == result["sessions"] > 10


def test_the_check_catches_a_flow_written_in_place(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="no whole version|no committed version|the reader logged"):
        bench().run(commits=120, rollback_every=0, root=tmp_path / "shop", atomic=False)
