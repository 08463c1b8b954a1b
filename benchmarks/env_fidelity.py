"""Does each benchmark environment return what the recorded agents saw? Replay every call, count.

Environment replay (paper §4.2) trusts the environment to answer a call as it answered the
recorded agent. This script replays every recorded call of every ingested session in a fresh
environment of its episode and reports per source how many results are byte-identical to the
record, and how many are equal after masking what no replay can reproduce (see
`stretto_core/envs/fidelity.py`). Sessions whose app has no environment (WorkBench) are counted
and skipped.

    python benchmarks/env_fidelity.py /tmp/stretto-ingested/tau2 /tmp/stretto-ingested/agentdojo

AgentDojo's set order follows PYTHONHASHSEED, so the script re-runs itself with the seed fixed
(0) unless one is set: two runs then give the same numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from stretto_core.evaluate.envs import has_environment
from stretto_core.evaluate.envs.fidelity import SourceTally, replay_recorded_calls
from stretto_core.evaluate.envs.recordings import infer_agentdojo_data, source_name, with_data_revision
from stretto_core.sessions.model import Session
from stretto_core.sessions.store import read_header, read_session

DEFAULT_DIRS = ("/tmp/stretto-ingested/tau2", "/tmp/stretto-ingested/agentdojo",
                "/tmp/stretto-ingested/workbench")

Job = tuple[str, list[str], str | None]
"""One source's work: its name, its session files, and its AgentDojo data revision."""


def replay_source(job: Job) -> tuple[str, SourceTally, list[str]]:
    """Replay every session of one source in a fresh environment each."""
    source, paths, revision = job
    tally, failures = SourceTally(), []
    for path in paths:
        try:
            tally.add(replay_recorded_calls(with_data_revision(read_session(path), revision)))
        except Exception as exc:  # one bad episode must not stop the run
            tally.failed_sessions += 1
            failures.append(f"{path}: {type(exc).__name__}: {exc}")
    return source, tally, failures


def plan(files: list[str]) -> tuple[list[Job], dict[str, int], dict[str, str]]:
    """Group sessions by source; infer each AgentDojo pipeline's data revision from its results.

    Returns the jobs (largest first), sessions skipped per app, and the revision per source.
    """
    groups: dict[str, list[str]] = {}
    pipelines: dict[str, str] = {}
    skipped: dict[str, int] = {}
    for path in files:
        header = read_header(path)
        app = header.app or "?"
        if not has_environment(app):
            skipped[app] = skipped.get(app, 0) + 1
            continue
        source = f"{app} {source_name(header)}"
        groups.setdefault(source, []).append(path)
        if app.startswith("agentdojo/"):
            pipelines[source] = source_name(header)
    by_pipeline: dict[str, list[Session]] = {}
    for source, pipeline in pipelines.items():
        by_pipeline.setdefault(pipeline, []).extend(read_session(p) for p in groups[source])
    inferred = {pipeline: infer_agentdojo_data(sessions) for pipeline, sessions in by_pipeline.items()}
    revisions = {source: inferred[pipeline] for source, pipeline in pipelines.items()}
    jobs = [(source, paths, revisions.get(source)) for source, paths in groups.items()]
    jobs.sort(key=lambda job: -len(job[1]))
    return jobs, skipped, {k: v or "(none shown)" for k, v in revisions.items()}


def session_files(dirs: list[str], limit: int | None) -> list[str]:
    files: list[str] = []
    for directory in dirs:
        found = sorted(str(p) for p in Path(directory).rglob("*.jsonl"))
        files.extend(found[:limit] if limit else found)
    return files


def run(jobs: list[Job], workers: int) -> tuple[dict[str, SourceTally], list[str]]:
    tallies: dict[str, SourceTally] = {}
    failures: list[str] = []
    if workers <= 1:
        parts = [replay_source(job) for job in jobs]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(replay_source, jobs))
    for source, tally, part_failures in parts:
        tallies[source] = tally
        failures.extend(part_failures)
    return tallies, failures


def print_table(tallies: dict[str, SourceTally], skipped: dict[str, int], failures: list[str]) -> None:
    header = f"{'source':<92} {'sess':>5} {'calls':>6} {'identical':>16} {'masked':>16} {'defence':>7}"
    print(header)
    print("-" * len(header))
    totals: dict[str, SourceTally] = {}
    for source in sorted(tallies):
        tally = tallies[source]
        print(_row(source, tally))
        totals.setdefault(source.split("/")[0], SourceTally()).merge(tally, keep_examples=0)
    print("-" * len(header))
    for benchmark, tally in sorted(totals.items()):
        print(_row(f"ALL {benchmark}", tally))
    for app, count in sorted(skipped.items()):
        print(f"skipped {count} sessions of {app}: no environment")
    for line in failures[:20]:
        print("FAILED", line)


def _row(name: str, tally: SourceTally) -> str:
    def pct(n: int) -> str:
        return f"{n} ({100 * n / tally.calls:.1f}%)" if tally.calls else "-"
    return (f"{name[:92]:<92} {tally.sessions:>5} {tally.calls:>6} {pct(tally.identical):>16} "
            f"{pct(tally.masked):>16} {tally.by_defence:>7}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="*", default=list(DEFAULT_DIRS))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--limit", type=int, default=None, help="sessions per directory")
    parser.add_argument("--json", dest="json_out", default=None, help="write the tallies here")
    args = parser.parse_args(argv)
    files = session_files([d for d in args.dirs if Path(d).is_dir()], args.limit)
    started = time.monotonic()
    jobs, skipped, revisions = plan(files)
    tallies, failures = run(jobs, args.workers)
    print_table(tallies, skipped, failures)
    for source, revision in sorted(revisions.items()):
        print(f"data revision {revision:<12} {source}")
    print(f"{len(files)} sessions in {time.monotonic() - started:.1f} s, "
          f"PYTHONHASHSEED={os.environ.get('PYTHONHASHSEED')}")
    if args.json_out:
        body = {source: vars(t) for source, t in sorted(tallies.items())}
        Path(args.json_out).write_text(json.dumps({"sources": body, "skipped": skipped,
                                                   "data_revisions": revisions,
                                                   "failures": failures}, indent=1))
    return 0


if __name__ == "__main__":
    if "PYTHONHASHSEED" not in os.environ:
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    sys.exit(main())
