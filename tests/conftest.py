"""Shared fixtures: the published τ²-bench runs, ingested once per test session from the data root."""

from __future__ import annotations

from pathlib import Path

import pytest

from stretto_core.sessions.ingest import ingest_files
from stretto_core.paths import data_root


@pytest.fixture(scope="session")
def tau2_ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of every τ²-bench episode in the data root, one session file each (about a second)."""
    source = data_root() / "tau2" / "trajectories"
    assert source.is_dir(), f"the τ²-bench trajectories are missing under {data_root()}"
    out = tmp_path_factory.mktemp("tau2-sessions")
    ingest_files("tau2", [source], out)
    return out
