"""Which published trajectories the tests read: the full shared data, and a sample built from it.

The repository carries none of the published data: it is read from `STRETTO_DATA` or
`../shared/data`. Quick tests run on a small sample of it, which `tests/fixtures/make_fixtures.py`
cuts from the full data into `tests/fixtures/data` (git-ignored) at the start of a test session,
in a fraction of a second, whenever the full data is there (`tests/fixtures/SAMPLE.md` says what
it holds and where it comes from). Tests that need the full data are marked `full_data`; tests
that need any published data (the sample will do) are marked `published_data`. Without the data
(a clone of the repository alone) both are skipped; CI, which always has it, refuses to run
without it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from stretto_core.paths import data_root

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_DATA = FIXTURES / "data"
MAKER = FIXTURES / "make_fixtures.py"
STAMP = FIXTURE_DATA / ".made-from"


def _has_full_data(root: Path) -> bool:
    trajectories = root / "tau2" / "trajectories"
    return (trajectories.is_dir() and root.resolve() != FIXTURE_DATA.resolve()
            and any(trajectories.rglob("*.json")))


def _stamp(root: Path) -> str:
    """What the sample was made from: the data root and the maker's code."""
    return f"{root.resolve()}\n{hashlib.sha256(MAKER.read_bytes()).hexdigest()}\n"


def build_sample(root: Path) -> None:
    """Cut the sample from the full data at `root` into FIXTURE_DATA, unless it is already that."""
    if STAMP.is_file() and STAMP.read_text(encoding="utf-8") == _stamp(root):
        return
    staging = Path(tempfile.mkdtemp(prefix="sample-", dir=FIXTURES))
    try:
        subprocess.run([sys.executable, str(MAKER), "--data", str(root), "--out", str(staging)],
                       check=True, stdout=subprocess.DEVNULL)
        (staging / STAMP.name).write_text(_stamp(root), encoding="utf-8")
        shutil.rmtree(FIXTURE_DATA, ignore_errors=True)
        staging.rename(FIXTURE_DATA)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


FULL_DATA = _has_full_data(data_root())
if FULL_DATA:
    build_sample(data_root())
PUBLISHED_DATA = FULL_DATA or (FIXTURE_DATA / "tau2" / "trajectories").is_dir()
if not FULL_DATA and not os.environ.get("STRETTO_DATA") and PUBLISHED_DATA:
    os.environ["STRETTO_DATA"] = str(FIXTURE_DATA)

full_data = pytest.mark.full_data
"""Mark a test that needs the full published data (more episodes than the sample holds)."""

published_data = pytest.mark.published_data
"""Mark a test that reads published trajectories (the sample will do): skipped without any."""
