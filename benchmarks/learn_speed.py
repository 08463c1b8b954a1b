"""Learning speed on τ² retail + airline train, before → after side by side, with the reference (issue 30, goal 2).

Each checkout's code (this one, and `--before`'s, checked out beside it) runs the same probe at
the same time, round after round, so both see the same load: it ingests the τ² trajectories with
its own code, warms up (one learn of each app), then learns each app's train split as `stretto
learn` does (`flow.stream.learn_chosen`, the cache of result indexes emptied first) `--repeats`
times, and the simple stdlib reference (`reference_learner.py`, the same for both) as many times
on the same files. Sessions per CPU-second: the two apps' sessions over their summed CPU time,
the quickest repeat of each.

Printed: before → after sessions per CPU-second (best round), the ratio (median round), each
one's ratio to the reference measured in the same process, and whether the flows are
byte-identical between the two checkouts (the benchmark fails when they are not, unless
`--allow-moved`: a commit that moves a flow on purpose says so).

    python benchmarks/learn_speed.py [--before HEAD~1] [--rounds 3] [--repeats 3] [--out bench-out/learn_speed.json]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from side_by_side import run_summary, best, checkout, flows_identical, load_note, parser, ratio_median, side_by_side
from summary_file import write_summary

APPS = ("tau2/retail", "tau2/airline")

PROBE = r"""
import json, os, shutil, sys, tempfile, time
from pathlib import Path
os.environ["STRETTO_PROGRESS"] = "0"
from stretto_core.flow.ir import save_flow
from stretto_core.flow.stream import choose, learn_chosen
from stretto_core.sessions.ingest import ingest_files
import stretto_core.sessions.state as state
from reference_learner import reference_learn
source, out, repeats = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
apps = sys.argv[4:]
store = Path(tempfile.mkdtemp())
try:
    ingest_files("tau2", [source], store / "s")  # written and read by this checkout's own code
    chosen = {app: choose([str(store / "s")], "train", apps=[app]) for app in apps}
    for app in apps:  # warm-up: imports and caches
        learn_chosen(chosen[app]); reference_learn(chosen[app].files)
    clock = time.process_time
    ours, theirs, flows = [], [], {}
    for _ in range(repeats):
        spent = 0.0
        for app in apps:
            (getattr(state, "clear_result_indexes", None) or state._indexes.clear)()
            t = clock(); flows[app] = learn_chosen(chosen[app]); spent += clock() - t
        ours.append(spent)
        t = clock()
        for app in apps:
            reference_learn(chosen[app].files)
        theirs.append(clock() - t)
    for app in apps:
        save_flow(flows[app], out.replace("{app}", app.replace("/", "-")))
    n = sum(len(chosen[app].files) for app in apps)
    print(json.dumps({"sessions": n, "cpu_s": min(ours), "per_cpu_s": n / min(ours),
                      "reference_per_cpu_s": n / min(theirs), "to_reference": min(theirs) / min(ours)}))
finally:
    shutil.rmtree(store, ignore_errors=True)
"""
"""Learns each app's train split `repeats` times, and the reference as often; one JSON line."""


def main(argv: list[str] | None = None) -> int:
    options = parser(__doc__, "bench-out/learn_speed.json", rounds=3)
    options.add_argument("--repeats", type=int, default=3, help="learns per round (the quickest counts)")
    options.add_argument("--allow-moved", action="store_true", help="report flows that differ, do not fail")
    args = options.parse_args(argv)
    from stretto_core.paths import data_root

    source = data_root() / "tau2" / "trajectories"
    with tempfile.TemporaryDirectory() as tmp_name, checkout(args.before) as before:
        tmp = Path(tmp_name)
        load = load_note()
        rounds = side_by_side(PROBE, [source, tmp / "{who}-{app}.flow.json", args.repeats, *APPS], before, args.rounds)
        same = {app: flows_identical(tmp / f"before-{app.replace('/', '-')}.flow.json",
                                     tmp / f"after-{app.replace('/', '-')}.flow.json") for app in APPS}
    summary = run_summary(
        args.before, load, rounds, apps=list(APPS), split="train", load_at_end=load_note(),
        sessions=rounds[0]["after"]["sessions"],
        before_per_cpu_s_best=1 / best(rounds, "before", "cpu_s") * rounds[0]["before"]["sessions"],
        after_per_cpu_s_best=1 / best(rounds, "after", "cpu_s") * rounds[0]["after"]["sessions"],
        speedup_median=ratio_median(rounds, "cpu_s"),
        after_to_reference_best=max(r["after"]["to_reference"] for r in rounds),
        before_to_reference_best=max(r["before"]["to_reference"] for r in rounds),
        reference_per_cpu_s_best=max(r[w]["reference_per_cpu_s"] for r in rounds for w in ("before", "after")),
        flows_identical=same, goal_sessions_per_cpu_s=1000)
    s = summary
    print(f"learning τ² retail + airline train ({s['sessions']} sessions), sessions per CPU-second, best of "
          f"{args.rounds} rounds run side by side ({load}; at the end {s['load_at_end']}):")
    print(f"  before ({s['before']}): {s['before_per_cpu_s_best']:.0f}/s → after: {s['after_per_cpu_s_best']:.0f}/s "
          f"(×{s['speedup_median']:.2f}, median round; goal ≥ 1,000/s)")
    print(f"  the reference learner in the same processes: {s['reference_per_cpu_s_best']:.0f}/s; stretto/reference "
          f"before ×{s['before_to_reference_best']:.3f}, after ×{s['after_to_reference_best']:.3f}")
    print(f"  flows byte-identical before/after: {same}")
    write_summary(args.out, summary)
    if not all(same.values()) and not args.allow_moved:
        raise SystemExit(f"learn_speed: the flows differ between the checkouts: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
