"""One new session into a staged flow: CPU per session, before → after, side by side (issue 30, goal 3).

Learns a flow from τ² retail train (all but the last `--new` sessions) and saves it; then each
checkout's code adds the last `--new` sessions one at a time to the flow it loaded:

- before (a commit without `flow/staged.py`): `merge_flows(flow, learn([session]))` per session,
  which re-adds, re-validates and re-derives the whole flow every time;
- after: `StagedFlow.add(session)` per session (counting only), and `StagedFlow.flow()` once at
  the end (the refresh a server reloads: derive, written as a new flow).

Both write the flow they end with; the two files and a batch learn of the same sessions must be
byte-identical (the benchmark fails otherwise). Both run at the same time, round after round, so
both see the same load; CPU time per session, the best round of each, and the median ratio.

    python benchmarks/stage_session.py [--before HEAD~1] [--new 20] [--rounds 3] [--out bench-out/stage_session.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from side_by_side import best, checkout, describe, flows_identical, load_note, ratio_median, side_by_side
from summary_file import write_summary

PROBE = r"""
import json, sys, time
from pathlib import Path
from stretto_core.flow.ir import learn, load_flow, merge_flows, save_flow
from stretto_core.sessions.store import load_sessions
from stretto_core.sessions.splits import split_of
store, flow_path, new, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
train = [s for s in load_sessions([Path(store)]) if split_of(s.header) == "train"]
fresh = train[-new:]
clock = time.process_time
try:
    from stretto_core.flow.staged import StagedFlow
except ImportError:
    StagedFlow = None
flow = load_flow(flow_path)
per = []
started = clock()
if StagedFlow is None:
    for s in fresh:
        t = clock(); flow = merge_flows(flow, learn([s], manifest=flow.manifest)); per.append(clock() - t)
    refresh = 0.0
else:
    t = clock(); staged = StagedFlow(flow); stage = clock() - t
    for s in fresh:
        t = clock(); staged.add(s); per.append(clock() - t)
    t = clock(); flow = staged.flow(shared=True); refresh = clock() - t
total = clock() - started
save_flow(flow, out)
print(json.dumps({"incremental": StagedFlow is not None, "per_session_ms": [1e3 * x for x in per],
                  "mean_ms": 1e3 * sum(per) / len(per), "max_ms": 1e3 * max(per),
                  "refresh_ms": 1e3 * refresh, "total_ms": 1e3 * total}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="HEAD~1", help="the commit (or a checkout's folder) to compare with")
    parser.add_argument("--new", type=int, default=20, help="sessions added one at a time")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="bench-out/stage_session.json")
    args = parser.parse_args(argv)
    from stretto_core.flow.ir import learn, save_flow
    from stretto_core.paths import data_root
    from stretto_core.sessions.ingest import ingest_files
    from stretto_core.sessions.splits import split_of
    from stretto_core.sessions.store import load_sessions

    with tempfile.TemporaryDirectory() as tmp_name, checkout(args.before) as before:
        tmp = Path(tmp_name)
        ingest_files("tau2", [data_root() / "tau2" / "trajectories" / "retail"], tmp / "store")
        train = [s for s in load_sessions([tmp / "store"]) if split_of(s.header) == "train"]
        save_flow(learn(train[:-args.new]), tmp / "flow.json")
        save_flow(learn(train), tmp / "batch.flow.json")
        load = load_note()
        rounds = side_by_side(PROBE, [tmp / "store", tmp / "flow.json", args.new, tmp / "out.flow.json"],
                              before, args.rounds)
        # each round overwrote out.flow.json: check the last round's two flows by running each once more
        same = {}
        for who, code in (("before", before), ("after", Path(__file__).resolve().parents[1])):
            from side_by_side import finish, start

            finish(start(code, PROBE, [tmp / "store", tmp / "flow.json", args.new, tmp / f"{who}.flow.json"]), who)
            same[who] = flows_identical(tmp / f"{who}.flow.json", tmp / "batch.flow.json")
    if not all(same.values()):
        raise SystemExit(f"stage_session: a flow differs from the batch learn's bytes: {same}")
    summary = {"before": describe(args.before), "sessions_added": args.new, "train_sessions": len(train),
               "rounds": rounds, "load_at_start": load, "flows_identical_to_batch_learn": same,
               "before_mean_ms_best": best(rounds, "before", "mean_ms"),
               "after_mean_ms_best": best(rounds, "after", "mean_ms"),
               "after_max_ms_best": best(rounds, "after", "max_ms"),
               "after_refresh_ms_best": best(rounds, "after", "refresh_ms"),
               "ratio_median": ratio_median(rounds, "mean_ms"), "python": sys.version.split()[0]}
    print(f"one new session into a flow of {len(train) - args.new} τ² retail train sessions, CPU ms per session "
          f"(best of {args.rounds} rounds run side by side; {load}):")
    print(f"  before ({summary['before']}): {summary['before_mean_ms_best']:.1f} ms "
          f"({'staged' if rounds[0]['before']['incremental'] else 'merge_flows per session'})")
    print(f"  after: {summary['after_mean_ms_best']:.1f} ms mean, {summary['after_max_ms_best']:.1f} ms max; "
          f"refresh (the flow written) {summary['after_refresh_ms_best']:.1f} ms")
    print(f"  ×{summary['ratio_median']:.1f} (median round); flows byte-identical to a batch learn: "
          f"before {same['before']}, after {same['after']}")
    write_summary(args.out, summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
