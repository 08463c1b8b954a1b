"""One new session into a staged flow: CPU per session, before → after, side by side (issue 30, goal 3).

Learns a flow from τ² retail train (all but the last `--new` sessions) and saves it; then each
checkout's code adds the last `--new` sessions one at a time to the flow it loaded:

- before (a commit without `flow/staged.py`): `merge_flows(flow, learn([session]))` per session,
  which re-adds, re-validates and re-derives the whole flow every time;
- after: `StagedFlow.add(session)` per session (counting only), each followed by
  `StagedFlow.flow(shared=True)` (the refresh: the flow derived, to be written at once), as a
  server that stages every session it serves does; the refresh's median is reported. A `--before`
  that has `flow/staged.py` too runs the same, so both columns compare add with add, refresh with
  refresh. After each refresh, the first decision on the refreshed flow: its `FlowRuntime` built
  and the reach of every read at a session's start (what a first decision pays beyond any other).

Both settle after loading the flow (`gc.collect(); gc.freeze()`, as `serve/pauses.settle` does),
so that a full collection over the sessions just read lands in neither's adds.

And the verb itself, `stretto flow stage` (`Deployment.stage`, as the CLI calls it): a deployment
folder holding the same train sessions' files but the last `--new`, staged and committed; then
the new files arrive one at a time, each staged (the first on the committed flow, the rest on
the staged one): CPU per stage, median, reading and writing the flow files included.

Each writes the flow it ends with, which must be byte-identical to a batch learn of the same
sessions by the same code (the benchmark fails otherwise). Both run at the same time, round after round, so
both see the same load; CPU time per session, the best round of each, and the median ratio.

    python benchmarks/stage_session.py [--before HEAD~1] [--new 20] [--rounds 3] [--out bench-out/stage_session.json]
    python benchmarks/stage_session.py --merge 5   # only: two halves of τ² retail+airline train merged, CPU

`--merge ROUNDS` times what docs/scale.md's `merge` row says, by this checkout alone: the two
halves of τ² retail+airline train learned apart, then `merge_flows(a, b)` (added and derived),
CPU per merge over ROUNDS rounds, with the merged flow's size.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from side_by_side import (run_summary, HERE, RETAIL, best, checkout, finish, flows_identical, load_note, parser,
                          ratio_median, retail_source, side_by_side, start)
from summary_file import write_summary

BATCH = RETAIL + r"""
from stretto_core.flow.ir import learn, save_flow
save_flow(learn(train), sys.argv[2])
print("{}")
"""
"""A batch learn of every train session, by a checkout's own code (its flow format)."""

PROBE = RETAIL + r"""
import gc, json, statistics, time
from stretto_core.flow.ir import learn, load_flow, merge_flows, save_flow
flow_path, new, out = sys.argv[2], int(sys.argv[3]), sys.argv[4]
fresh = train[-new:]
clock = time.process_time
try:
    from stretto_core.flow.staged import StagedFlow
except ImportError:
    StagedFlow = None
from stretto_core.serve.runtime import FlowRuntime
save_flow(learn(train[:-new]), flow_path)  # the staged flow, learned and written by this checkout's code
flow = load_flow(flow_path)
gc.collect(); gc.freeze()  # settled after loading, as `serve/pauses.settle` does: both checkouts alike

def first_decision(served):  # what a flow's first decision pays beyond any other: its runtime built, the reach of each read
    t = clock(); runtime = FlowRuntime(served); [runtime.reach([], tool) for tool in runtime.read_tools()]
    return clock() - t

per, builds = [], []
started = clock()
if StagedFlow is None:
    for s in fresh:
        t = clock(); flow = merge_flows(flow, learn([s], manifest=flow.manifest)); per.append(clock() - t)
    refresh = 0.0
else:
    t = clock(); staged = StagedFlow(flow); staged.flow(shared=True); stage = clock() - t
    refreshes = []
    for s in fresh:  # as a server staging each session it serves: the session added, the flow refreshed
        t = clock(); staged.add(s); per.append(clock() - t)
        t = clock(); flow = staged.flow(shared=True); refreshes.append(clock() - t)
        builds.append(first_decision(flow))
    refresh = statistics.median(refreshes)
total = clock() - started - sum(builds)
median_ms = lambda xs: 1e3 * statistics.median(xs) if xs else None
save_flow(flow, out)
print(json.dumps({"incremental": StagedFlow is not None, "per_session_ms": [1e3 * x for x in per],
                  "mean_ms": 1e3 * sum(per) / len(per), "median_ms": 1e3 * statistics.median(per),
                  "max_ms": 1e3 * max(per), "refresh_ms": 1e3 * refresh,
                  "refresh_max_ms": 1e3 * max(refreshes) if StagedFlow is not None else 0.0, "total_ms": 1e3 * total,
                  "first_decision_ms": median_ms(builds), "train_sessions": len(train)}))
"""

VERB = r"""
import json, shutil, statistics, sys, tempfile, time
from pathlib import Path
from stretto_core.cli.commands.flow import count_session_files
from stretto_core.flow.history import Deployment
from stretto_core.flow.stream import choose, learn_chosen
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.splits import split_of
from stretto_core.sessions.store import read_session
new, out = int(sys.argv[2]), sys.argv[3]
work = Path(tempfile.mkdtemp())
ingest_files("tau2", [Path(sys.argv[1])], work / "store")  # by this checkout's own code
train = [p for p in sorted((work / "store").rglob("*.jsonl")) if split_of(read_session(p, None).header) == "train"]
folder = work / "deployment"
(folder / "sessions").mkdir(parents=True)
for path in train[:-new]:
    shutil.copy(path, folder / "sessions" / path.name)
deployment = Deployment(folder)
count = lambda files: count_session_files(files, None)  # what `stretto flow stage` hands the deployment
deployment.stage(count, settled=0)
deployment.commit()
clock = time.process_time
per = []
for path in train[-new:]:
    shutil.copy(path, folder / "sessions" / path.name)
    t = clock(); deployment.stage(count, settled=0); per.append(clock() - t)
staged = (folder / "flow.staged.json").read_bytes()
batch = learn_chosen(choose([str(p) for p in sorted((folder / "sessions").iterdir())], "auto")).to_json()
shutil.copy(folder / "flow.staged.json", out)
shutil.rmtree(work)
print(json.dumps({"stage_ms": [1e3 * x for x in per], "stage_median_ms": 1e3 * statistics.median(per),
                  "stage_first_ms": 1e3 * per[0], "identical": staged == (batch + "\n").encode("utf-8")}))
"""
"""`stretto flow stage` on a deployment folder, one new session file at a time (CPU per stage)."""


def merge_cost(rounds: int) -> dict:
    """Two halves of τ² retail+airline train learned apart and merged, CPU per merge (this checkout)."""
    import os
    import statistics
    import time

    from stretto_core.flow.ir import learn, merge_flows
    from stretto_core.paths import data_root
    from stretto_core.sessions.ingest import ingest_files
    from stretto_core.sessions.splits import split_of
    from stretto_core.sessions.store import load_sessions

    with tempfile.TemporaryDirectory() as store:
        ingest_files("tau2", [data_root() / "tau2" / "trajectories"], Path(store))
        sessions = load_sessions([Path(store)])
    train = [x for x in sessions if split_of(x.header) == "train" and (x.header.app or "") in
             ("tau2/retail", "tau2/airline")]
    a, b = learn(train[::2]), learn(train[1::2])
    load = os.getloadavg()[0]
    cpu = []
    for _ in range(rounds):
        started = time.process_time()
        merged = merge_flows(a, b)
        cpu.append(time.process_time() - started)
    size = len(merged.to_json().encode("utf-8"))
    print(f"merge_flows of two halves of τ² retail+airline train ({len(train)} sessions, merged flow "
          f"{size / 1e3:.0f} KB): {min(cpu):.3f} s CPU best, {statistics.median(cpu):.3f} s median of {rounds} "
          f"(load {load:.1f})")
    return {"merge_cpu_s": cpu, "sessions": len(train), "flow_bytes": size, "load_before": load}


def main(argv: list[str] | None = None) -> int:
    options = parser(__doc__, "bench-out/stage_session.json", rounds=3)
    options.add_argument("--new", type=int, default=20, help="sessions added one at a time")
    options.add_argument("--merge", type=int, metavar="ROUNDS", help="only time merge_flows (see above)")
    args = options.parse_args(argv)
    if args.merge:
        write_summary(args.out, merge_cost(args.merge))
        return 0
    source = retail_source()
    with tempfile.TemporaryDirectory() as tmp_name, checkout(args.before) as before:
        tmp = Path(tmp_name)
        load = load_note()
        rounds = side_by_side(PROBE, [source, tmp / "start-{who}.flow.json", args.new, tmp / "out-{who}.flow.json"],
                              before, args.rounds)
        verb = side_by_side(VERB, [source, args.new, tmp / "verb-{who}.flow.json"], before, args.rounds)
        # each checkout's final flow against its own batch learn (the format may differ between them)
        same = {}
        for who, code in (("before", before), ("after", HERE)):
            finish(start(code, PROBE, [source, tmp / f"{who}.start.flow.json", args.new, tmp / f"{who}.flow.json"]), who)
            finish(start(code, BATCH, [source, tmp / f"{who}.batch.flow.json"]), who)
            same[who] = flows_identical(tmp / f"{who}.flow.json", tmp / f"{who}.batch.flow.json")
    train = rounds[0]["after"]["train_sessions"]
    same_verb = {who: all(r[who]["identical"] for r in verb) for who in ("before", "after")}
    if not all(same.values()) or not all(same_verb.values()):
        raise SystemExit(f"stage_session: a flow differs from the batch learn's bytes: {same}, flow stage {same_verb}")
    bests = {f"{who}_{key}_best": best(rounds, who, key)
             for who, key in (("before", "mean_ms"), ("after", "mean_ms"), ("after", "max_ms"),
                              ("after", "median_ms"), ("after", "refresh_ms"), ("before", "refresh_ms"),
                              ("before", "first_decision_ms"), ("after", "first_decision_ms"))}
    summary = run_summary(args.before, load, rounds, sessions_added=args.new, train_sessions=train,
                          flows_identical_to_batch_learn=same, **bests,
                          ratio_median=ratio_median(rounds, "mean_ms"),
                          refresh_ratio_median=ratio_median(rounds, "refresh_ms"), flow_stage_rounds=verb,
                          flow_stage_identical_to_batch_learn=same_verb,
                          before_flow_stage_ms_best=best(verb, "before", "stage_median_ms"),
                          after_flow_stage_ms_best=best(verb, "after", "stage_median_ms"),
                          flow_stage_ratio_median=ratio_median(verb, "stage_median_ms"))
    print(f"one new session into a flow of {train - args.new} τ² retail train sessions, CPU ms per session "
          f"(best of {args.rounds} rounds run side by side; {load}):")
    print(f"  before ({summary['before']}): {summary['before_mean_ms_best']:.1f} ms "
          f"({'staged' if rounds[0]['before']['incremental'] else 'merge_flows per session'})")
    print(f"  after: {summary['after_mean_ms_best']:.1f} ms mean, {summary['after_median_ms_best']:.1f} ms median, "
          f"{summary['after_max_ms_best']:.1f} ms max; "
          f"refresh (the flow written, median per session) {summary['before_refresh_ms_best']:.1f} → "
          f"{summary['after_refresh_ms_best']:.1f} ms (×{summary['refresh_ratio_median']:.2f}, median round)")
    print(f"  the first decision on a refreshed flow (its runtime built, the reach of each read): "
          f"{summary['before_first_decision_ms_best']:.1f} → {summary['after_first_decision_ms_best']:.1f} ms")
    print(f"  add ×{summary['ratio_median']:.2f} (median round); flows byte-identical to a batch learn: "
          f"before {same['before']}, after {same['after']}")
    print(f"  `stretto flow stage` of one new session file (median per stage, best round): "
          f"{summary['before_flow_stage_ms_best']:.0f} → {summary['after_flow_stage_ms_best']:.0f} ms "
          f"(×{summary['flow_stage_ratio_median']:.2f}, median round); staged flow byte-identical to a batch "
          f"learn: before {same_verb['before']}, after {same_verb['after']}")
    write_summary(args.out, summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
