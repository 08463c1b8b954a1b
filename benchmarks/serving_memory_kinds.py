"""What a typical served session holds, by kind (issue 30: served memory ≤ 30 KB per session).

Learns a flow from a τ² domain's train split in STRETTO_DATA, serves every test session of that
domain once to warm the flow's caches, then serves them all again and keeps them alive, as
`serving_memory.py` does (lookups answered from the record, the per-session budget lifted). It
prints, per session, the bytes still held after a garbage collection (tracemalloc), grouped by
the file and by the line that allocated them, and the containers the collector tracks, by type.
The process-wide caches of shared indexes are cleared first, so what a session holds of them is
counted with it, as `serving_memory.py` counts it.

    python benchmarks/serving_memory_kinds.py [--domain retail] [--top 30] [--out bench-out/serving_memory_kinds.json]
"""

from __future__ import annotations

import argparse
import collections
import gc
import tempfile
import tracemalloc
from pathlib import Path

from decision_latency import recorded_results
from serving_memory import MANIFESTS, clear_index_caches, play

from stretto_core.flow.ir import learn
from stretto_core.paths import data_root
from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.splits import split_of
from stretto_core.sessions.store import load_sessions
from summary_file import write_summary

ROOT = str(Path(__file__).resolve().parents[1]) + "/"


def tracked_by_type() -> collections.Counter:
    return collections.Counter(type(o).__name__ for o in gc.get_objects())


def grouped(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, key: str, sessions: int,
            top: int) -> list[dict]:
    """The bytes and blocks still held, per session, by allocating file or line (largest first)."""
    rows = []
    for stat in after.compare_to(before, key)[:top]:
        frame = stat.traceback[0]
        where = frame.filename.replace(ROOT, "") + (f":{frame.lineno}" if key == "lineno" else "")
        rows.append({"where": where, "bytes": stat.size_diff / sessions, "blocks": stat.count_diff / sessions})
    return rows


def measure(domain: str, top: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        ingest_files("tau2", [data_root() / "tau2" / "trajectories"], Path(tmp))
        sessions = load_sessions([Path(tmp)])
    app = f"tau2/{domain}"
    train = [s for s in sessions if s.header.app == app and split_of(s.header) == "train"]
    test = [s for s in sessions if s.header.app == app and split_of(s.header) == "test"]
    engine = Engine(FlowRuntime(learn(train)), EngineConfig(per_session=10 ** 9))
    MANIFESTS[id(engine)] = test[0].header.manifest
    known = [recorded_results(s) for s in test]
    for s, k in zip(test, known):  # warm the flow's caches, so they are not counted
        play(engine, s.events, k, True)
    clear_index_caches()
    gc.collect()
    types_before = tracked_by_type()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    kept = [play(engine, s.events, k, True)[0] for s, k in zip(test, known)]
    clear_index_caches()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    types_after = tracked_by_type()
    own = [tracemalloc.Filter(False, tracemalloc.__file__)]
    before, after = before.filter_traces(own), after.filter_traces(own)
    n = len(kept)
    total = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    tracked = {name: (types_after[name] - types_before.get(name, 0)) / n for name in types_after}
    return {"domain": domain, "sessions": n, "kb_per_session": total / n / 1024,
            "by_file": grouped(before, after, "filename", n, top),
            "by_line": grouped(before, after, "lineno", n, top),
            "tracked_by_type": dict(sorted(((k, v) for k, v in tracked.items() if v > 0), key=lambda kv: -kv[1])[:top])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="retail", choices=["airline", "retail", "telecom"])
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", default="bench-out/serving_memory_kinds.json")
    args = parser.parse_args(argv)
    result = measure(args.domain, args.top)
    print(f"{result['domain']}: {result['sessions']} test sessions served, {result['kb_per_session']:.1f} KB each")
    for title, part in (("by file", "by_file"), ("by line", "by_line")):
        print(f"== held per session, {title}")
        for row in result[part]:
            print(f"  {row['bytes']:8.0f} B {row['blocks']:7.1f} blocks  {row['where']}")
    print("== containers the collector tracks, per session, by type")
    for name, count in result["tracked_by_type"].items():
        print(f"  {count:8.1f} {name}")
    write_summary(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
