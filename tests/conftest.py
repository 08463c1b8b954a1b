"""Shared fixtures: the published τ²-bench runs, ingested once per test session from the data root.

The data root is the full shared data when present (`shared_data.py` decides, and cuts the
quick tests' sample from it, before any test reads it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shared_data import FULL_DATA, PUBLISHED_DATA
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.shared_indexes import clear_result_indexes


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "full_data: needs the full published data, not the sample")
    config.addinivalue_line("markers", "published_data: reads published trajectories (the sample will do)")
    if os.environ.get("CI") and not FULL_DATA:
        raise pytest.UsageError(f"CI runs the full-data tests, but no full data is under {data_root()} "
                                "(set STRETTO_DATA or put the shared data beside the checkout)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if FULL_DATA:
        return
    skip = pytest.mark.skip(reason=f"needs the full published data; running on the sample in {data_root()}")
    absent = pytest.mark.skip(reason="needs the published trajectories: set STRETTO_DATA or put the shared "
                                     "data beside the checkout (the repository carries none)")
    for item in items:
        if not PUBLISHED_DATA and ("published_data" in item.keywords or "full_data" in item.keywords):
            item.add_marker(absent)
        elif "full_data" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def results_indexed_afresh() -> None:
    """Each test learns as a fresh process would: no result already indexed and named by an earlier
    test (learning keeps up to 1,024 results' indexes, so a test watching the naming saw none)."""
    clear_result_indexes()


@pytest.fixture(scope="session")
def tau2_ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of every τ²-bench episode in the data root, one session file each (about a second)."""
    source = data_root() / "tau2" / "trajectories"
    assert source.is_dir(), f"the τ²-bench trajectories are missing under {data_root()}"
    out = tmp_path_factory.mktemp("tau2-sessions")
    ingest_files("tau2", [source], out)
    return out
