"""The published runs the lifecycle benchmarks read (served loop, promotion table, online curve).

Each corpus is ingested once into a cache folder (`--cache`, default `.stretto-bench/lifecycle`)
and split as the bench splits (τ²-bench's official task split; AgentDojo by (suite, user task)).
Nothing here learns: the benchmarks choose on the train side and read the test side once.
"""

from __future__ import annotations

from pathlib import Path

from stretto_core.cli.commands._load import load_for_verb
from stretto_core.evaluate.measure.bench_data import Corpus
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.model import Session
from stretto_core.sessions.splits import make_split_file

DOJO_SUITES = ("banking", "slack", "travel", "workspace")
DEFAULT_CACHE = Path(".stretto-bench/lifecycle")


def sources(app: str) -> tuple[str, list[Path]]:
    """The harness and the files or folders of one app's published runs."""
    root = data_root()
    bench, domain = app.split("/", 1)
    if bench == "tau2":
        return "tau2", sorted((root / "tau2" / "trajectories" / domain).glob("*.json"))
    if bench == "agentdojo":
        return "agentdojo", sorted(p / domain for p in (root / "agentdojo" / "runs").iterdir() if (p / domain).is_dir())
    raise SystemExit(f"no published runs for {app}: tau2/<domain> or agentdojo/<suite>")


def load_app(app: str, cache: Path = DEFAULT_CACHE) -> Corpus:
    """Every session of one app (ingested into the cache the first time), split as the bench splits."""
    folder = cache / app.replace("/", "__")
    if not (folder / ".done").exists():
        harness, paths = sources(app)
        folder.mkdir(parents=True, exist_ok=True)
        ingest_files(harness, paths, folder)
        (folder / ".done").write_text("ingested\n", encoding="utf-8")
    loaded = [s for s in load_for_verb([folder]) if s.header.app == app]
    return Corpus(app, loaded, make_split_file([s.header for s in loaded], root=data_root()))


def in_order(sessions: list[Session]) -> list[Session]:
    """Sessions in the order they were recorded (their start time, then id): how they arrive."""
    return sorted(sessions, key=lambda s: (str(s.header.started_at or ""), s.session_id))
