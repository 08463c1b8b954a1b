"""Where stretto finds the published trajectories and keeps its own files.

The benchmark data is never part of the repository: it is read from `STRETTO_DATA`, or from
`../shared/data` beside the checkout. stretto's own files (recorded sessions, flows) live under
`STRETTO_HOME`, by default `.stretto/` in the working directory.
"""

from __future__ import annotations

import os
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent


def data_root() -> Path:
    """The folder of published trajectories: `$STRETTO_DATA`, else `../shared/data` beside the repo."""
    env = os.environ.get("STRETTO_DATA")
    if env:
        return Path(env)
    return _REPO.parent / "shared" / "data"


def stretto_home() -> Path:
    """stretto's own folder: `$STRETTO_HOME`, else `.stretto` in the working directory."""
    return Path(os.environ.get("STRETTO_HOME", ".stretto"))


def manifest_path(benchmark: str, domain: str) -> Path:
    """The shipped manifest of a benchmark's domain, e.g. `manifests/tau2-retail.json`."""
    return data_root() / "manifests" / f"{benchmark}-{domain}.json"
