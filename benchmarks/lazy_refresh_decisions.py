"""A lazily refreshed served flow decides as an eagerly refreshed one, on every τ² test split (a check).

`StagedFlow.flow(lazy=True)` leaves α's and the reach's posteriors to their first reader. This
learns a flow from each τ² domain's train split but its last `--new` sessions, stages those one
at a time twice (refreshed lazily, and eagerly as `flow stage` does), and replays the domain's
held-out test split with both final flows: every row of both replays (each lookup made, each
candidate weighed) must be the same, and both flows must write the same bytes. Exits 1 otherwise.
No timing here: the refresh's CPU is `stage_session.py`'s.

    python benchmarks/lazy_refresh_decisions.py [--new 5] [--domains retail airline telecom]
        [--out bench-out/lazy_refresh_decisions.json]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow.ir import learn
from stretto_core.flow.staged import StagedFlow
from stretto_core.paths import data_root
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.splits import split_of
from stretto_core.sessions.store import load_sessions
from summary_file import write_summary


def splits(domain: str) -> tuple[list, list]:
    """A τ² domain's train and test sessions, ingested afresh."""
    store = Path(tempfile.mkdtemp(prefix="stretto-lazy-"))
    try:
        ingest_files("tau2", [data_root() / "tau2" / "trajectories" / domain], store)
        sessions = load_sessions([store])
    finally:
        shutil.rmtree(store, ignore_errors=True)
    return ([s for s in sessions if split_of(s.header) == "train"],
            [s for s in sessions if split_of(s.header) == "test"])


def check(domain: str, new: int) -> dict:
    """Both refreshes of one domain replayed on its test split: lookups, rows, and whether all agree."""
    train, test = splits(domain)
    start = learn(train[:-new])
    lazy, eager = StagedFlow(start), StagedFlow(learn(train[:-new]))
    for session in train[-new:]:
        lazy.add(session)
        eager.add(session)
        lazy_flow, eager_flow = lazy.flow(shared=True, lazy=True), eager.flow(shared=True)
    options = ReplayOptions(weigh=True, processes=1)
    deferred = lazy_flow.alpha is None
    got = {who: replay_sessions(FlowRuntime(flow), test, options)
           for who, flow in (("lazy", lazy_flow), ("eager", eager_flow))}
    same_rows = got["lazy"].model_dump_json() == got["eager"].model_dump_json()
    same_bytes = lazy_flow.to_json() == eager_flow.to_json()
    return {"domain": domain, "train": len(train), "test": len(test), "staged": new,
            "alphas_deferred_until_served": deferred, "lookups": got["eager"].lookups,
            "weighed_rows": len(got["eager"].weighed_rows), "same_rows": same_rows, "same_bytes": same_bytes}


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    options.add_argument("--new", type=int, default=5, help="train sessions staged one at a time")
    options.add_argument("--domains", nargs="+", default=["retail", "airline", "telecom"])
    options.add_argument("--out", default="bench-out/lazy_refresh_decisions.json")
    args = options.parse_args(argv)
    if args.new < 1:
        raise SystemExit(f"lazy_refresh_decisions: --new must be at least 1, not {args.new}")
    results = [check(domain, args.new) for domain in args.domains]
    for r in results:
        print(f"{r['domain']}: {r['train']} train ({r['staged']} staged one at a time), {r['test']} test sessions "
              f"replayed: {r['lookups']} lookups, {r['weighed_rows']} candidates weighed; lazy = eager: rows "
              f"{r['same_rows']}, bytes {r['same_bytes']} (α deferred until served: {r['alphas_deferred_until_served']})")
    write_summary(args.out, {"new": args.new, "domains": results})
    ok = all(r["same_rows"] and r["same_bytes"] and r["alphas_deferred_until_served"] for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
