"""Real sessions the class-lift tests learn from: τ² retail and airline, AgentDojo's suites."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pytest

from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.model import Session
from stretto_core.sessions.store import load_sessions

DOJO = "agentdojo/runs/gpt-4o-2024-05-13"
CORPORA = {"retail": ("tau2", ["tau2/trajectories/retail"], "tau2/retail"),
           "airline": ("tau2", ["tau2/trajectories/airline"], "tau2/airline"),
           "agentdojo": ("agentdojo", [f"{DOJO}/{suite}" for suite in ("banking", "slack", "travel", "workspace")], None)}
"""Each corpus: its harness, its folders under the data root, the app kept (None: every one)."""


def corpus_sessions(name: str, out: Path, most: int = 60) -> list[Session]:
    """Up to `most` sessions of each folder of corpus `name`, ingested under `out`."""
    harness, folders, app = CORPORA[name]
    kept: list[Session] = []
    for i, folder in enumerate(folders):
        path = data_root() / folder
        assert path.exists(), f"no {folder} under the data root {data_root()}"
        ingest_files(harness, [path], out / str(i))
        kept += [s for s in load_sessions([out / str(i)]) if app is None or s.header.app == app][:most]
    return kept


def corpus_fixture(names: Sequence[str], named: bool = False) -> Any:
    """A module-scoped fixture, one case per corpus of `names`: its sessions (`corpus_sessions`),
    with the corpus's name first when `named`. Assign it to the name the tests ask for."""
    @pytest.fixture(scope="module", params=list(names))
    def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
        sessions = corpus_sessions(request.param, tmp_path_factory.mktemp(request.param))
        return (request.param, sessions) if named else sessions
    return corpus
