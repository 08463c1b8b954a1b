"""The bench's inputs: published runs ingested, split by task, and grouped into domains and agents.

`stretto bench` reads τ²-bench, AgentDojo and WorkBench from the data folder (STRETTO_DATA),
ingests them into its own output folder, and freezes the train/test split there, so that every
number it prints can be recomputed from that folder. Nothing is learned from a test task:
τ²-bench's official split, and for AgentDojo and WorkBench a hash of (app, task) with seed 0 that
holds out 40% of tasks (`splits.py`).

An agent is its model: `agent_key` drops a provider prefix, a date and an AgentDojo defence
suffix, so `azure/gpt-4o-2024-11-20` and `gpt-4o`, or `gpt-4o-2024-05-13-tool_filter` and
`gpt-4o-2024-05-13`, are one agent, and "learned from other agents" never sees the same model.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from stretto_core.errors import StrettoError
from stretto_core.sessions.ingest import IngestReport, ingest_files
from stretto_core.evaluate.measure.ceiling import SOLO_SUFFIX
from stretto_core.sessions.agents import DATE_SUFFIX, DEFENCE_SUFFIXES, agent_key
from stretto_core.sessions.model import Session, SessionHeader
from stretto_core.sessions.splits import SplitFile, make_split_file, save_split_file, split_of
from stretto_core.sessions.store import LoadReport, load_sessions

SOURCES = {"tau2": "tau2/trajectories", "agentdojo": "agentdojo/runs", "workbench": "workbench/results"}
"""Each benchmark ingested, and where its published runs are under the data folder."""

QUICK_TAU2_FILES = 3
"""--quick: the smallest few results files of each τ²-bench domain."""
QUICK_AGENTDOJO_PIPELINES = 3
"""--quick: the first few AgentDojo pipelines (all their suites)."""
QUICK_WORKBENCH = (2, 2)
"""--quick: the first two WorkBench domains, two smallest results files each."""


def domain_of(header: SessionHeader) -> str:
    """The row a session is measured in: its app, marked `(solo)` when no user speaks."""
    app = header.app or "(no app)"
    return app + SOLO_SUFFIX if header.solo else app


def input_files(data: Path, source: str, quick: bool) -> list[Path]:
    """The published files of one benchmark to ingest: all of them, or the --quick slice."""
    root = data / SOURCES[source]
    if not root.is_dir():
        raise StrettoError(f"{root}: no {source} runs here; point --data (or STRETTO_DATA) at the published data")
    if not quick:
        return [root]
    folders = sorted(p for p in root.iterdir() if p.is_dir())
    if source == "tau2":
        return [f for d in folders for f in sorted(d.glob("*.json"), key=lambda p: p.stat().st_size)[:QUICK_TAU2_FILES]]
    if source == "agentdojo":
        return folders[:QUICK_AGENTDOJO_PIPELINES]
    domains, files = QUICK_WORKBENCH
    return [f for d in folders[:domains] for f in sorted(d.glob("*.csv"), key=lambda p: p.stat().st_size)[:files]]


def ingest_all(data: Path, out: Path, quick: bool = False) -> dict[str, IngestReport]:
    """Ingest every benchmark into `out/<source>` (emptied first), one report each."""
    reports = {}
    for source in SOURCES:
        target = out / source
        if target.exists():
            shutil.rmtree(target)
        reports[source] = ingest_files(source, input_files(data, source, quick), target)
    return reports


@dataclass
class Corpus:
    """One benchmark's sessions, each on its side of the frozen split."""

    name: str
    sessions: list[Session]
    split: SplitFile
    sides: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sides = {s.session_id: split_of(s.header, self.split) for s in self.sessions}

    def domains(self) -> list[str]:
        return sorted({domain_of(s.header) for s in self.sessions})

    def on(self, side: str, domain: str | None = None, app: str | None = None) -> list[Session]:
        """Sessions on one side of the split, of one domain (or of any regime of one app)."""
        return [s for s in self.sessions if self.sides[s.session_id] == side
                and (domain is None or domain_of(s.header) == domain) and (app is None or s.header.app == app)]


def load_corpora(sessions_dir: Path, split_path: Path, data: Path) -> tuple[dict[str, Corpus], LoadReport]:
    """Read every ingested session, freeze the split into `split_path`, and group by benchmark."""
    report = LoadReport()
    loaded = {source: load_sessions(sessions_dir / source, report) for source in SOURCES
              if (sessions_dir / source).is_dir()}
    headers = [s.header for sessions in loaded.values() for s in sessions]
    frozen = make_split_file(headers, root=data)
    split_path.parent.mkdir(parents=True, exist_ok=True)
    save_split_file(frozen, split_path)
    return {source: Corpus(source, sessions, frozen) for source, sessions in loaded.items()}, report
