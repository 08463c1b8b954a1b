"""Stage, commit and roll back a deployment's flow 1,000 times while another process starts sessions.

    python benchmarks/commit_under_load.py [--commits 1000] [--rollback-every 10] [--in-place] [--json OUT]

The writer (this process) alternates two real flows (learned from the demo shop's recorded
sessions), staging and committing each through `flow/history.py`, and rolls back every Nth
version. The reader, a second process, is an app served by `Stretto(flow="…/flow.json")`: it
starts sessions as fast as it can (each takes the reloader's stat, and reads the file when it
changed), and between sessions also reads the flow file's raw bytes.

It fails loudly (exit 1) unless: every session served a version whose hash is that version's file
in the history, byte for byte; every raw read of the flow file is some whole version's bytes; no
flow failed to load; and the reader saw more than one version (reloading happened at all). It
prints commits, sessions started, versions seen, and the CPU time per commit and per session.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def two_flows() -> tuple[Any, Any]:
    """Two flows of the demo shop, learned from different recorded sessions (not test data)."""
    from stretto_core.demo.builtin import serve_customers
    from stretto_core.demo.shop import SHOP_MANIFEST
    from stretto_core.flow.ir import learn
    from stretto_core.sessions.store import load_sessions

    folder = Path(tempfile.mkdtemp(prefix="stretto-load-"))
    serve_customers(folder / "a", range(0, 4), "a")
    serve_customers(folder / "b", range(4, 10), "b")
    return (learn(load_sessions([folder / "a"]), SHOP_MANIFEST),
            learn(load_sessions([folder / "b"]), SHOP_MANIFEST))


def in_place(path: str | Path, data: bytes) -> None:
    """A writer that is not atomic (the file truncated, then written in two halves): what the
    check must catch, to show it can fail (`--in-place`)."""
    with open(path, "wb") as fh:
        fh.write(data[: len(data) // 2])
        fh.flush()
        time.sleep(0.005)
        fh.write(data[len(data) // 2:])


def write_versions(root: Path, commits: int, rollback_every: int, atomic: bool = True) -> dict[str, Any]:
    """The writer: `commits` commits of alternating flows, a rollback after every Nth."""
    from stretto_core.flow import history
    from stretto_core.flow.history import Deployment

    if not atomic:
        history.write_atomic = in_place  # type: ignore[assignment]

    a, b = two_flows()
    dep = Deployment(root)
    dep.stage_flow(a, note="first")
    dep.commit()
    (root / "ready").touch()
    rollbacks = 0
    started = time.process_time()
    for i in range(1, commits):
        dep.stage_flow(b if i % 2 else a, note=f"load {i}")
        dep.commit()
        if rollback_every and i % rollback_every == 0:
            dep.rollback()
            rollbacks += 1
    took = time.process_time() - started
    return {"commits": commits, "rollbacks": rollbacks, "writer_cpu_per_commit_ms": 1000 * took / max(1, commits - 1)}


def read_sessions(root: Path, pause: float = 0.0) -> None:
    """The reader process: an app starting sessions until the writer is done (`pause` seconds
    between sessions; 0: as fast as it can); prints JSON."""
    from stretto_core.demo.shop import SHOP_MANIFEST
    from stretto_core.errors import InputError
    from stretto_core.serve.live import Stretto

    failures: list[str] = []

    class Count(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                failures.append(record.getMessage()[:300])

    logging.getLogger("stretto").addHandler(Count())
    while not (root / "ready").exists():
        time.sleep(0.01)
    stretto: Stretto | None = None
    while stretto is None:
        try:
            stretto = Stretto(root / "flow.json", store=False, manifest=SHOP_MANIFEST)
        except InputError as exc:  # the app could not even start on the flow it found: a failed read
            failures.append(str(exc)[:300])
            time.sleep(0.001)
    served: dict[str, int] = {}
    raw: dict[str, int] = {}
    sessions = 0
    started = time.process_time()
    while not (root / "done").exists():
        live = stretto.session()
        sessions += 1
        loaded = live.served_flow
        key = f"{loaded.version}:{loaded.sha256}" if loaded is not None else "none"
        served[key] = served.get(key, 0) + 1
        sha = hashlib.sha256((root / "flow.json").read_bytes()).hexdigest()
        raw[sha] = raw.get(sha, 0) + 1
        if pause:
            time.sleep(pause)
    took = time.process_time() - started
    print(json.dumps({"sessions": sessions, "served": served, "raw": raw, "failures": failures,
                      "reader_cpu_per_session_ms": 1000 * took / max(1, sessions)}))


def run(commits: int = 1000, rollback_every: int = 10, root: Path | None = None, atomic: bool = True,
        pause: float = 0.0) -> dict[str, Any]:
    """Both sides, checked; the figures (raises AssertionError on any partial or failed read)."""
    root = root or Path(tempfile.mkdtemp(prefix="stretto-deploy-"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    reader = subprocess.Popen([sys.executable, __file__, "--reader", str(root), "--pause", str(pause)],
                              stdout=subprocess.PIPE,
                              text=True, env=env, cwd=REPO)
    try:
        wrote = write_versions(root, commits, rollback_every, atomic)
    finally:
        (root / "done").touch()
    out, _ = reader.communicate(timeout=600)
    if reader.returncode != 0:
        raise AssertionError(f"the reader process failed (exit {reader.returncode})")
    read = json.loads(out.strip().splitlines()[-1])
    versions = {int(p.name[1:7]): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in (root / "history").glob("v*.flow.json")}
    whole = set(versions.values())
    bad_sessions = [k for k in read["served"] if k == "none" or versions.get(int(k.split(":")[0])) != k.split(":")[1]]
    assert not bad_sessions, f"sessions served a flow that is no committed version: {bad_sessions[:3]}"
    partial = [sha for sha in read["raw"] if sha not in whole]
    assert not partial, f"{len(partial)} raw reads of the flow file were no whole version"
    assert not read["failures"], f"the reader logged: {read['failures'][:3]}"
    assert len(read["served"]) > 1, "the reader never saw a new version: nothing was tested"
    return {**wrote, "versions_written": len(versions), "sessions": read["sessions"],
            "versions_seen_by_sessions": len(read["served"]), "raw_reads": sum(read["raw"].values()),
            "partial_reads": len(partial), "load_failures": len(read["failures"]),
            "reader_cpu_per_session_ms": read["reader_cpu_per_session_ms"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--rollback-every", type=int, default=10)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--in-place", action="store_true", help="Write flows in place (not atomically): the "
                                                                 "checks must then fail.")
    parser.add_argument("--pause", type=float, default=0.0, help="Seconds the reader waits between sessions.")
    parser.add_argument("--reader", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reader is not None:
        read_sessions(args.reader, args.pause)
        return
    result = run(args.commits, args.rollback_every, atomic=not args.in_place, pause=args.pause)
    for key, value in result.items():
        print(f"{key}: {value:.3g}" if isinstance(value, float) else f"{key}: {value}")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
