"""Real sessions the class-lift tests learn from: τ² retail and airline, AgentDojo's suites.

Each corpus names the files (τ²: one agent's run each) or run folders (AgentDojo: one pipeline's
suite each) it reads, never a whole folder: the shared data grows (a second retail agent arrived
after these tests were written), and a test must not change its cases when it does. Of the named
sources, a test takes the first `most` sessions by session id: a fixed set, whatever else the
folders hold. On the quick tests' sample (no full data) a τ² corpus reads its domain's sample
folder, whose files and episodes `tests/fixtures/make_fixtures.py` names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pytest

from shared_data import FULL_DATA
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.model import Session
from stretto_core.sessions.store import load_sessions

TAU2 = "tau2/trajectories"
RETAIL_TOOLORCHESTRA = f"{TAU2}/retail/gpt-4.1-mini-2025-04-14__toolorchestra_nvidia_2025-12-02__toolorchestra_retail_gpt-5_1trial.json"
"""ToolOrchestra's gpt-4.1-mini on retail: 114 sessions, 71 of the train split."""
RETAIL_GPT41 = f"{TAU2}/retail/gpt-4.1__results__gpt-4.1_retail_defautl_gpt-4.1_1trials.json"
"""τ²'s own runner, gpt-4.1 on retail: the 40 test tasks."""
RETAIL_GPT4O = f"{TAU2}/retail/azure_gpt-4o-2024-11-20__judge_viewer__azure-retail-full.json"
"""gpt-4o on retail, rebuilt from τ²'s judge-viewer transcripts: 114 sessions, 74 of the train split."""
AIRLINE_GPT4O = f"{TAU2}/airline/azure_gpt-4o-2024-11-20__simulations__azure-airline-full.json"
AIRLINE_OPUS = f"{TAU2}/airline/claude-opus-4-6__adaptive-agent_community_2026-03-23__adaptive_agent_airline_opus46_cascata.json"
DOJO = "agentdojo/runs/gpt-4o-2024-05-13"
CORPORA = {"retail": ("tau2", [RETAIL_TOOLORCHESTRA, RETAIL_GPT41], "tau2/retail"),
           "airline": ("tau2", [AIRLINE_GPT4O, AIRLINE_OPUS], "tau2/airline"),
           "agentdojo": ("agentdojo", [f"{DOJO}/{suite}" for suite in ("banking", "slack", "travel", "workspace")], None)}
"""Each corpus: its harness, its named sources under the data root, the app kept (None: every one).
τ² sources are read together (the first `most` of all of them), AgentDojo's suites each apart
(each holds fewer than 60 runs: every one)."""


def corpus_sessions(name: str, out: Path, most: int = 60) -> list[Session]:
    """The first `most` sessions by session id of corpus `name`'s named sources (of each suite,
    for AgentDojo), ingested under `out`."""
    harness, sources, app = CORPORA[name]
    if harness == "tau2" and not FULL_DATA:
        sources = [str(Path(sources[0]).parent)]  # the sample's own named files
    groups = [sources] if harness == "tau2" else [[source] for source in sources]
    kept: list[Session] = []
    for i, group in enumerate(groups):
        paths = [data_root() / source for source in group]
        for path in paths:
            assert path.exists(), f"no {path} under the data root {data_root()}"
        ingest_files(harness, paths, out / str(i))
        sessions = sorted(load_sessions([out / str(i)]), key=lambda s: s.session_id)
        kept += [s for s in sessions if app is None or s.header.app == app][:most]
    return kept


def corpus_fixture(names: Sequence[str], named: bool = False) -> Any:
    """A module-scoped fixture, one case per corpus of `names`: its sessions (`corpus_sessions`),
    with the corpus's name first when `named`. Assign it to the name the tests ask for."""
    @pytest.fixture(scope="module", params=list(names))
    def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
        sessions = corpus_sessions(request.param, tmp_path_factory.mktemp(request.param))
        return (request.param, sessions) if named else sessions
    return corpus
