"""The episodes and flow the adapters' end-to-end runs use, and what the replay says of them.

Episodes come from the sample the tests cut from the published data into `tests/fixtures/data`
(`tests/fixtures/SAMPLE.md`); with the full data (`STRETTO_DATA` or `../shared/data`) the whole test split can be run. The
flow is learned from the TRAIN split of τ² retail only (never from a test task) and shipped in
`tests/fixtures/flows/`, so runs from the repository alone make real lookups.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Sequence

from stretto_core.flow.ir import Flow, load_flow
from stretto_core.paths import data_root, data_root_at
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.model import Session
from stretto_core.sessions.store import load_sessions

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures"


def fixture_data() -> Path:
    """The sample of published trajectories the tests cut into `tests/fixtures/data` (git-ignored)."""
    return FIXTURES / "data"


def fixture_flow(app: str = "tau2/retail") -> Flow:
    """The shipped flow of `app`, learned from its train split."""
    return load_flow(FIXTURES / "flows" / (app.replace("/", "-") + ".flow.json"))


def load_episodes(app: str = "tau2/retail", split: str = "test", *, full: bool = False,
                  limit: int | None = None) -> list[Session]:
    """`app`'s episodes of one split, from the sample (default) or the full data (`full=True`)."""
    root = data_root() if full else fixture_data()
    benchmark = app.split("/")[0]
    if benchmark != "tau2":
        raise ValueError(f"end-to-end episodes exist for tau2 apps, not {app!r}")
    out = Path(tempfile.mkdtemp(prefix="stretto-episodes-"))
    with data_root_at(root):
        ingest_files("tau2", sorted((root / "tau2" / "trajectories").rglob("*.json")), out)
    sessions = [s for s in load_sessions(out) if s.header.app == app and s.header.labels.get("split") == split]
    sessions.sort(key=lambda s: s.header.session_id)
    return sessions[:limit] if limit is not None else sessions


def load_fixture_episodes(app: str = "tau2/retail", split: str = "test") -> list[Session]:
    """The sample's episodes of `app` in one split."""
    return load_episodes(app, split)


def replay_turns(flow: Flow, sessions: Sequence[Session], theta: float = 0.3, *,
                 proxy_view: bool = False) -> tuple[int, int]:
    """LLM turns without and with the flow, by `stretto replay --env`'s rule, over `sessions`.

    `proxy_view=True` replays what a proxy between the agent and its tools sees of each episode
    (`sessions.views.as_seen_by_a_proxy`: no user words, no replies): the turns it saves are
    taken from the episodes' own count of LLM turns."""
    from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
    from stretto_core.serve.runtime import FlowRuntime

    options = ReplayOptions(theta=theta, env=True, processes=1, view="proxy" if proxy_view else "agent")
    result = replay_sessions(FlowRuntime(flow), list(sessions), options)
    return result.llm_turns, result.llm_turns - result.turns_saved
