"""Where stretto finds the published trajectories and keeps its own files.

The benchmark data is never part of the repository: it is read from `STRETTO_DATA`, or from
`../shared/data` beside the checkout. stretto's own files (recorded sessions, flows) live under
`STRETTO_HOME`, by default `.stretto/` in the working directory.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_REPO = Path(__file__).resolve().parent.parent


SAMPLE = _REPO / "tests" / "fixtures" / "data"
"""The sample of published trajectories the tests cut from the full data (git-ignored; `tests/fixtures/SAMPLE.md`)."""


def data_root() -> Path:
    """The folder of published trajectories: `$STRETTO_DATA`, else `../shared/data` beside the
    checkout (or beside the working directory, for an installed copy), else the checkout's sample."""
    env = os.environ.get("STRETTO_DATA")
    if env:
        return Path(env)
    beside_checkout = _REPO.parent / "shared" / "data"
    for candidate in (beside_checkout, Path.cwd().parent / "shared" / "data", Path.cwd() / SAMPLE.relative_to(_REPO)):
        if candidate.is_dir():
            return candidate
    return SAMPLE if SAMPLE.is_dir() else beside_checkout


def stretto_home() -> Path:
    """stretto's own folder: `$STRETTO_HOME`, else `.stretto` in the working directory."""
    return Path(os.environ.get("STRETTO_HOME", ".stretto"))


def manifest_path(benchmark: str, domain: str) -> Path:
    """The shipped manifest of a benchmark's domain, e.g. `manifests/tau2-retail.json`."""
    return data_root() / "manifests" / f"{benchmark}-{domain}.json"


@contextmanager
def data_root_at(path: Path) -> Iterator[Path]:
    """Read the published trajectories from `path` for a while (e.g. the test fixtures' sample)."""
    before = os.environ.get("STRETTO_DATA")
    os.environ["STRETTO_DATA"] = str(path)
    try:
        yield path
    finally:
        if before is None:
            os.environ.pop("STRETTO_DATA", None)
        else:
            os.environ["STRETTO_DATA"] = before
