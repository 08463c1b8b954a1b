"""`stretto learn` at 1×, 2×, 4× and 8× the shared τ² sessions: peak memory, throughput, workers.

Ingests the τ²-bench trajectories in STRETTO_DATA, then writes k copies of every session (new
session ids, same events and tasks) for k = 1, 2, 4, 8 and learns the train split of each
in a fresh process, measuring its peak resident memory (`ru_maxrss`), wall and CPU time:

- `stretto learn` as it is (one session at a time);
- the sessions loaded at once and then learned (`load_sessions` + `flow.ir.learn`, what
  `stretto learn` did before), for comparison;
- throughput on τ² retail train alone (`--app tau2/retail`, 1×), the issue's yardstick: the
  whole command (process start and imports included), and once started (the learn alone, in a
  process that learned airline first, with the result-index cache emptied);
- `--workers 1` and `--workers 2` on Dask (a local cluster) at the largest multiple: wall time,
  and the flow's bytes against the in-process one;
- two shards of the files learned apart and merged in either order (`stretto flow merge`):
  the bytes against learning at once;
- with `--compare CHECKOUT`: the throughput once started on τ² retail train of this checkout
  and of another (an older commit, say), side by side: the two run at the same time, round
  after round, so both see the same load on a shared machine, and their ratio is printed
  (`--compare-only` runs this alone).

Copies repeat their sessions' results, so at 2× and more the index of a result is often
reused (`ToolState`'s cache); the 1× row is the throughput on distinct sessions.

    python benchmarks/learn_scale.py [--out bench-out/learn_scale.json] [--multiples 1 2 4 8]
    python benchmarks/learn_scale.py --compare ../before --compare-only   # before -> after, ratios
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from summary_file import write_summary

PROBE = r"""
import json, resource, sys, time
mode, out, *args = sys.argv[1:]
started, cpu = time.perf_counter(), time.process_time()
if mode == "steady":  # imports and caches warmed on other sessions first; CPU time of the learn alone
    from stretto_core.flow.stream import choose, learn_chosen
    import stretto_core.sessions.state as state
    learn_chosen(choose([args[0]], "train", apps=["tau2/airline"]))
    chosen = choose([args[0]], "train", apps=[args[1]])
    best = None
    for _ in range(int(args[2]) if len(args) > 2 else 1):  # the quickest of a few learns
        (getattr(state, "clear_result_indexes", None) or state._indexes.clear)()
        started, cpu = time.perf_counter(), time.process_time()
        learn_chosen(chosen)
        took = (time.perf_counter() - started, time.process_time() - cpu)
        best = took if best is None or took[1] < best[1] else best
    started, cpu = time.perf_counter() - best[0], time.process_time() - best[1]
elif mode == "cli":
    from stretto_core.cli import main
    code = main(["learn", *args, "--out", out])
    assert code in (0, None), code
else:
    from stretto_core.flow.ir import learn, save_flow
    from stretto_core.sessions.splits import filter_sessions
    from stretto_core.sessions.store import load_sessions
    save_flow(learn(list(filter_sessions(load_sessions([args[0]]), "train"))), out)
usage = resource.getrusage(resource.RUSAGE_SELF)
children = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall_s": time.perf_counter() - started, "cpu_s": time.process_time() - cpu,
                  "peak_mb": usage.ru_maxrss / 1024, "children_peak_mb": children.ru_maxrss / 1024}))
"""


def run(mode: str, out: Path, *args: str) -> dict:
    """One learn in a fresh process; its own report of time and memory."""
    done = subprocess.run([sys.executable, "-c", PROBE, mode, str(out), *args], capture_output=True, text=True,
                          env={**os.environ, "STRETTO_PROGRESS": "0"})
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def start_steady(checkout: Path, base: Path, app: str, repeats: int) -> subprocess.Popen:
    """The steady learn of `app` by the code of `checkout` (its folder first on the path), started."""
    env = {**os.environ, "STRETTO_PROGRESS": "0",
           "PYTHONPATH": os.pathsep.join([str(checkout), str(checkout / "adapters")])}
    return subprocess.Popen([sys.executable, "-c", PROBE, "steady", os.devnull, str(base), app, str(repeats)],
                            cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def compare(other: Path, base: Path, rounds: int, app: str = "tau2/retail", repeats: int = 3) -> dict:
    """Sessions per CPU-second once started, this checkout against `other`, run at the same time
    (the same load on both); the best round of each, and each round's ratio."""
    here = Path(__file__).resolve().parents[1]
    n = sum(1 for _ in choose_files(base, app))
    mine, theirs, ratios = [], [], []
    for _ in range(rounds):
        procs = [start_steady(here, base, app, repeats), start_steady(other.resolve(), base, app, repeats)]
        outs = []
        for proc in procs:
            stdout, stderr = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(stderr[-2000:])
            outs.append(n / json.loads(stdout.strip().splitlines()[-1])["cpu_s"])
        mine.append(outs[0])
        theirs.append(outs[1])
        ratios.append(outs[0] / outs[1])
    return {"app": app, "sessions": n, "other": str(other), "rounds": rounds,
            "this_sessions_per_cpu_s": max(mine), "other_sessions_per_cpu_s": max(theirs),
            "ratio_of_best": max(mine) / max(theirs), "ratio_median": sorted(ratios)[len(ratios) // 2],
            "this_rounds": mine, "other_rounds": theirs}


def choose_files(base: Path, app: str):
    from stretto_core.flow.stream import choose

    return choose([str(base)], "train", apps=[app]).files


def copies(source: Path, target: Path, k: int) -> int:
    """`k` copies of every session file under `source` in `target` (new session ids); files written."""
    target.mkdir(parents=True)
    n = 0
    for path in sorted(source.glob("*.jsonl")):
        header, rest = path.read_text(encoding="utf-8").split("\n", 1)
        head = json.loads(header)
        for i in range(k):
            copy = dict(head, session_id=f"{head['session_id']}-copy{i}")
            (target / f"{path.stem}-copy{i}.jsonl").write_text(json.dumps(copy) + "\n" + rest, encoding="utf-8")
            n += 1
    return n


def train_count(flow: Path) -> int:
    data = json.loads(flow.read_text(encoding="utf-8"))
    return int(sum(s["sessions"] for s in data["provenance"]["sources"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench-out/learn_scale.json")
    parser.add_argument("--multiples", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--no-workers", action="store_true", help="skip the Dask runs")
    parser.add_argument("--compare", type=Path, help="another checkout: its steady throughput beside this one's")
    parser.add_argument("--compare-only", action="store_true", help="with --compare: run only the comparison")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the comparison")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="learn-scale-"))
    try:
        base = tmp / "sessions"
        ingest_files("tau2", [data_root() / "tau2" / "trajectories"], base)
        if args.compare is not None and args.compare_only:
            return _report_compare(compare(args.compare, base, args.rounds), Path(args.out))
        rows = []
        for k in args.multiples:
            folder = tmp / f"x{k}"
            files = copies(base, folder, k)
            streamed = run("cli", tmp / f"x{k}.flow.json", str(folder), "--split", "train")
            loaded = run("loaded", tmp / f"x{k}.loaded.flow.json", str(folder))
            sessions = train_count(tmp / f"x{k}.flow.json")
            same = (tmp / f"x{k}.flow.json").read_bytes() == (tmp / f"x{k}.loaded.flow.json").read_bytes()
            rows.append({"multiple": k, "files": files, "train_sessions": sessions, "same_flow": same,
                         "streamed": streamed, "loaded_at_once": loaded,
                         "sessions_per_s": sessions / streamed["wall_s"],
                         "sessions_per_cpu_s": sessions / streamed["cpu_s"]})
            if k != args.multiples[-1]:
                shutil.rmtree(folder)
        retail = run("cli", tmp / "retail.flow.json", str(base), "--split", "train", "--app", "tau2/retail")
        n_retail = train_count(tmp / "retail.flow.json")
        steady = run("steady", tmp / "unused.flow.json", str(base), "tau2/retail")
        summary: dict = {"rows": rows, "python": sys.version.split()[0],
                         "retail_train": {"sessions": n_retail, **retail,
                                          "sessions_per_s": n_retail / retail["wall_s"],
                                          "sessions_per_cpu_s": n_retail / retail["cpu_s"],
                                          "steady_sessions_per_cpu_s": n_retail / steady["cpu_s"],
                                          "steady_sessions_per_s": n_retail / steady["wall_s"]}}
        big = tmp / f"x{args.multiples[-1]}"
        if not args.no_workers:
            workers = {}
            for n in (1, 2):
                report = run("cli", tmp / f"w{n}.flow.json", str(big), "--split", "train", "--workers", str(n))
                report["same_flow"] = (tmp / f"w{n}.flow.json").read_bytes() == \
                    (tmp / f"x{args.multiples[-1]}.flow.json").read_bytes()
                workers[str(n)] = report
            summary["workers"] = workers
        summary["shards_merged"] = shards_merged(tmp, base)
        if args.compare is not None:
            summary["compare"] = compare(args.compare, base, args.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'×':>3} {'train':>6} {'stream MB':>10} {'loaded MB':>10} {'sess/s':>8} {'sess/cpu-s':>10} {'same':>5}")
    for r in rows:
        print(f"{r['multiple']:3d} {r['train_sessions']:6d} {r['streamed']['peak_mb']:10.0f} "
              f"{r['loaded_at_once']['peak_mb']:10.0f} {r['sessions_per_s']:8.0f} {r['sessions_per_cpu_s']:10.0f} "
              f"{str(r['same_flow']):>5}")
    rt = summary["retail_train"]
    print(f"τ² retail train: {rt['sessions']} sessions, {rt['sessions_per_s']:.0f}/s wall, "
          f"{rt['sessions_per_cpu_s']:.0f}/s CPU (process start and imports included); "
          f"{rt['steady_sessions_per_cpu_s']:.0f}/s CPU, {rt['steady_sessions_per_s']:.0f}/s wall once started")
    for n, w in summary.get("workers", {}).items():
        print(f"--workers {n}: {w['wall_s']:.1f} s wall, same flow as in-process: {w['same_flow']}")
    sm = summary["shards_merged"]
    print(f"two shards merged a+b == b+a: {sm['either_order']}, == learned at once: {sm['as_at_once']}")
    if "compare" in summary:
        _print_compare(summary["compare"])
    write_summary(args.out, summary)
    return 0


def _print_compare(c: dict) -> None:
    print(f"{c['app']} train, {c['sessions']} sessions, once started (CPU, best of {c['rounds']} rounds run "
          f"side by side): this checkout {c['this_sessions_per_cpu_s']:.0f}/s, {c['other']} "
          f"{c['other_sessions_per_cpu_s']:.0f}/s: ×{c['ratio_of_best']:.2f} (median round ×{c['ratio_median']:.2f})")


def _report_compare(c: dict, out: Path) -> int:
    _print_compare(c)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"compare": c, "python": sys.version.split()[0]}, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


def shards_merged(tmp: Path, base: Path) -> dict:
    """Two halves of the files learned apart, merged in either order, against learning at once."""
    from stretto_core.cli import main as cli

    files = sorted(base.glob("*.jsonl"))
    halves = [tmp / "shard-a", tmp / "shard-b"]
    for half, part in zip(halves, (files[::2], files[1::2])):
        half.mkdir()
        for f in part:
            shutil.copy(f, half / f.name)
    for half in halves:
        cli(["learn", str(half), "--split", "train", "--out", str(half) + ".flow.json"])
    cli(["learn", str(base), "--split", "train", "--out", str(tmp / "whole.flow.json")])
    a, b = (str(h) + ".flow.json" for h in halves)
    cli(["flow", "merge", a, b, "--out", str(tmp / "ab.flow.json")])
    cli(["flow", "merge", b, a, "--out", str(tmp / "ba.flow.json")])
    ab, ba = (tmp / "ab.flow.json").read_bytes(), (tmp / "ba.flow.json").read_bytes()
    return {"either_order": ab == ba, "as_at_once": ab == (tmp / "whole.flow.json").read_bytes()}


if __name__ == "__main__":
    raise SystemExit(main())
