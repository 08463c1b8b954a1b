"""Which published trajectories the tests read: the full shared data when present, else the sample.

A clone of the repository alone has only the attributed sample in `tests/fixtures/data`; the
default suite runs on it. Tests that need the full data are marked `full_data`: they run when
`STRETTO_DATA` (or `../shared/data`) holds it, are skipped otherwise, and fail under CI, which
always has it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stretto_core.paths import data_root

FIXTURE_DATA = Path(__file__).resolve().parent / "fixtures" / "data"


def _has_full_data(root: Path) -> bool:
    trajectories = root / "tau2" / "trajectories"
    return trajectories.is_dir() and root.resolve() != FIXTURE_DATA and any(trajectories.rglob("*.json"))


FULL_DATA = _has_full_data(data_root())
if not FULL_DATA and not os.environ.get("STRETTO_DATA"):
    os.environ["STRETTO_DATA"] = str(FIXTURE_DATA)

full_data = pytest.mark.full_data
"""Mark a test that needs the full published data (more episodes than the sample holds)."""
