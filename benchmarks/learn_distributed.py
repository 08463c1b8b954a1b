"""Learning on 2 workers against one plain process, in wall time, from 1× to 16× τ² retail+airline train.

Issue 30, goal 6: a learn on Dask (or Ray) with 2 workers should beat one plain process (`stretto
learn` without --workers) in wall time from 4× the train data up, write the same bytes, and
return each worker's read report. Ingests the τ²-bench trajectories in STRETTO_DATA, writes k
copies of every session (new ids, the `learn_scale.py` trick) for each multiple, and learns
`--split train --app tau2/retail --app tau2/airline` in a fresh process each way:

- plain: one process, no cluster (`stream.learn_chosen`, what `stretto learn` runs);
- dask: a local cluster of 2 worker processes (`flow/distributed.py`);
- ray: 2 Ray workers, run by `--ray-python` (a Python that imports ray; skipped when none does),
  on a local Ray the learn starts and stops;
- ray-running: the same on a Ray head of 2 CPUs started before the timed runs and stopped after
  them (`running_ray.py`), as a deployment keeps one up: the learn connects (its connect time said
  apart) and disconnects (its workers run this checkout's shard count, also for `ray-running-before`,
  whose learn, by the other checkout, only schedules the shards differently);
- with `--before CHECKOUT`: dask (and ray) by another checkout's code (the commit before, say), beside.

Each run's wall time is taken by this process around the child (interpreter start, imports and
the cluster's start and stop included); the child says its cluster's start and stop apart, its
own CPU, and each worker's read report (host:pid, files, sessions, bytes, CPU). Ways run one
after another within a round, rounds repeat (`--rounds`), and the best of each is compared, with
the load average before each run printed: this machine is shared, so the load is part of the
figure. The flows are compared byte for byte with the plain one.

    python benchmarks/learn_distributed.py [--multiples 1 2 4 8 16] [--rounds 2] \
        [--ray-python /path/to/python-with-ray] [--before ../checkout-before]
    python benchmarks/learn_distributed.py --starts 3   # a local cluster's start alone, spawned vs forked
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from learn_scale import copies
from running_ray import RunningRay, cluster_env
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from summary_file import write_summary

APPS = ["tau2/retail", "tau2/airline"]
WAYS = ("plain", "dask", "dask-before", "ray", "ray-before", "ray-running", "ray-running-before")

PROBE = r"""
import json, resource, sys, time
started, cpu = time.perf_counter(), time.process_time()
engine, folder, out, apps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
address = sys.argv[5] or None
from stretto_core.flow.ir import save_flow
from stretto_core.flow.stream import choose, learn_chosen
chosen = choose([folder], "train", apps=apps)
pass1 = time.perf_counter() - started
counter = None
if engine != "plain":
    from stretto_core.flow.distributed import cluster_counter
    counter = cluster_counter(chosen.manifest, workers=2, engine=engine, address=address)
flow = learn_chosen(chosen, counter=counter)
save_flow(flow, out)
stop = time.perf_counter()
import os, socket
report = {"pass1_s": pass1, "sessions": flow.provenance.sources[0].sessions,
          "client": f"{socket.gethostname()}:{os.getpid()}"}
if counter is not None:
    counter.close()
    report["start_s"] = getattr(counter, "start_s", None)
    report["workers"] = [w.as_dict() for w in getattr(counter, "reports", [])]
report["stop_s"] = time.perf_counter() - stop
report["client_cpu_s"] = time.process_time() - cpu
report["children_cpu_s"] = sum(getattr(resource.getrusage(resource.RUSAGE_CHILDREN), f) for f in ("ru_utime", "ru_stime"))
report["inside_wall_s"] = time.perf_counter() - started
print(json.dumps(report))
"""


def engine_of(way: str) -> str:
    """The engine a way's learn runs: `ray-running` and `dask-before` are ray's and dask's."""
    return way.split("-")[0]


def run(python: str, code_dir: Path | None, engine: str, folder: Path, out: Path, address: str | None = None) -> dict:
    """One learn in a fresh process, its wall time taken from here; its own report added."""
    env = {**cluster_env(code_dir), "STRETTO_PROGRESS": "0"}
    load = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run([python, "-c", PROBE, engine, str(folder), str(out), ",".join(APPS), address or ""],
                          capture_output=True, text=True, env=env, cwd=code_dir)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{engine} learn failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return {"wall_s": wall, "load_before": load, **report}


START = r"""
import json, sys, time
import dask
from distributed import Client, LocalCluster
import stretto_core.flow.distributed
def cpu():
    return time.process_time()
if __name__ == "__main__":
    started = time.perf_counter()
    with dask.config.set({"distributed.worker.multiprocessing-method": sys.argv[1]}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster)
    up = time.perf_counter() - started
    workers = list(client.scheduler_info()["workers"])
    cpus = client.gather([client.submit(cpu, pure=False, workers=[w]) for w in workers])
    client.close(); cluster.close()
    print(json.dumps({"start_s": up, "worker_cpu_s": cpus}))
"""


def starts(rounds: int) -> dict[str, list[dict]]:
    """A local cluster of 2 workers started spawned (Dask's default) and forked (stretto's on
    Linux), in fresh processes taking turns: wall to start, each worker's CPU once started."""
    out: dict[str, list[dict]] = {"spawn": [], "fork": []}
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "start_cluster.py"  # spawned workers re-import a main module from a file
        script.write_text(START)
        for _ in range(rounds):
            for method in out:
                done = subprocess.run([sys.executable, str(script), method], capture_output=True, text=True)
                if done.returncode != 0:
                    raise SystemExit(done.stderr[-2000:])
                out[method].append({"load_before": os.getloadavg()[0],
                                    **json.loads(done.stdout.strip().splitlines()[-1])})
    for method, runs in out.items():
        print(f"local Dask cluster, 2 workers {method}ed: start " + ", ".join(f"{r['start_s']:.2f}" for r in runs)
              + " s; worker CPU once up " + ", ".join("/".join(f"{c:.2f}" for c in r["worker_cpu_s"]) for r in runs)
              + " s (load " + ", ".join(f"{r['load_before']:.1f}" for r in runs) + ")")
    return out


def imports_ray(python: str) -> bool:
    return subprocess.run([python, "-c", "import ray"], capture_output=True).returncode == 0


def ways(args: argparse.Namespace, here: Path) -> list[tuple[str, str, Path | None]]:
    """(name, python, code folder) of each way this run measures."""
    out: list[tuple[str, str, Path | None]] = [("plain", sys.executable, here), ("dask", sys.executable, here)]
    if args.before is not None:
        out.append(("dask-before", sys.executable, args.before.resolve()))
    ray_python = args.ray_python or sys.executable
    if imports_ray(ray_python):
        out.append(("ray", ray_python, here))
        out.append(("ray-running", ray_python, here))
        if args.before is not None:
            out.append(("ray-before", ray_python, args.before.resolve()))
            out.append(("ray-running-before", ray_python, args.before.resolve()))
    else:
        print(f"ray: not importable by {ray_python}; skipped (--ray-python names one that has it)")
    return out


def chosen(args: argparse.Namespace, here: Path) -> list[tuple[str, str, Path | None]]:
    """The ways this run measures: `--ways` (or every one available), plain always first."""
    return [w for w in ways(args, here) if not args.ways or w[0] in args.ways or w[0] == "plain"]


def measure(args: argparse.Namespace, tmp: Path, base: Path) -> list[dict]:
    here = Path(__file__).resolve().parents[1]
    chosen_ways = chosen(args, here)
    running = next((RunningRay(python, here) for name, python, _ in chosen_ways if name.startswith("ray-running")), None)
    with running if running is not None else contextlib.nullcontext():
        if running is not None:
            print(f"ray-running: a head of 2 CPUs at {running.address}, started in {running.start_s:.1f} s "
                  "before the timed runs (not in them)", flush=True)
        return measure_with(args, tmp, base, chosen_ways, running.address if running else None)


def measure_with(args: argparse.Namespace, tmp: Path, base: Path, chosen_ways: list[tuple[str, str, Path | None]],
                 address: str | None) -> list[dict]:
    rows = []
    for k in args.multiples:
        folder = tmp / f"x{k}"
        copies(base, folder, k)
        runs: dict[str, list[dict]] = {name: [] for name, _, _ in chosen_ways}
        for _ in range(args.rounds):
            for name, python, code in chosen_ways:
                out = tmp / f"x{k}.{name}.flow.json"
                report = run(python, code, engine_of(name), folder, out,
                             address if name.startswith("ray-running") else None)
                report["same_bytes"] = out.read_bytes() == (tmp / f"x{k}.plain.flow.json").read_bytes()
                runs[name].append(report)
        best = {name: min(rs, key=lambda r: r["wall_s"]) for name, rs in runs.items()}
        rows.append({"multiple": k, "train_sessions": best["plain"]["sessions"], "best": best, "rounds": runs})
        shutil.rmtree(folder)
        print_row(rows[-1])
    return rows


def cpu_path(r: dict) -> float:
    """The CPU on the learn's critical path: this process's own, and the busiest worker's (the
    workers count side by side); what the wall would be on idle cores, cluster processes aside."""
    workers = [w["cpu_s"] for w in r.get("workers", []) if w["worker"] != r.get("client")]
    return r["client_cpu_s"] + max(workers, default=0.0)


def round_ratios(row: dict, name: str) -> str:
    """Each round's plain wall over this way's wall in the same round (run one after the other)."""
    pairs = zip(row["rounds"]["plain"], row["rounds"][name])
    return " ".join(f"×{p['wall_s'] / r['wall_s']:.2f}" for p, r in pairs)


def median_ratio(row: dict, name: str) -> float:
    """The median of the rounds' ratios (plain's wall over this way's, each round side by side)."""
    return statistics.median(p["wall_s"] / r["wall_s"] for p, r in zip(row["rounds"]["plain"], row["rounds"][name]))


def print_row(row: dict) -> None:
    best = row["best"]
    plain = best["plain"]["wall_s"]
    cells = []
    for name, r in best.items():
        said = "connect" if name.startswith("ray-running") else "start"
        start = f", {said} {r['start_s']:.1f}" if r.get("start_s") else ""
        ratio = "" if name == "plain" else (f" ×{plain / r['wall_s']:.2f} (rounds: {round_ratios(row, name)}; "
                                            f"median ×{median_ratio(row, name):.2f})")
        same = "" if name == "plain" else (" same" if r["same_bytes"] else " DIFFERENT BYTES")
        cells.append(f"{name} {r['wall_s']:.1f} s{start}{ratio}{same} (CPU path {cpu_path(r):.1f} s, "
                     f"load {r['load_before']:.1f})")
    print(f"{row['multiple']:>2}× {row['train_sessions']:>5} sessions: " + "; ".join(cells), flush=True)
    for name, r in best.items():
        for w in r.get("workers", []):
            print(f"     {name} worker {w['worker']}: {w['sessions']} sessions from {w['files']} files, "
                  f"{w['bytes_read'] / 1e6:.1f} MB, {w['shards']} shards, {w['cpu_s']:.1f} s CPU", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench-out/learn_distributed.json")
    parser.add_argument("--multiples", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--rounds", type=int, default=2, help="rounds of every way; the quickest of each is compared")
    parser.add_argument("--ray-python", help="a Python that imports ray and stretto (default: this one)")
    parser.add_argument("--ways", nargs="+", choices=WAYS, help="only these ways (plain is always run)")
    parser.add_argument("--ray-worker-niceness", type=int, metavar="N",
                        help="Ray's workers' niceness (Ray's default is 15: they yield to every other process on "
                             "the cores, this learn's own counting thread included); set for every Ray run")
    parser.add_argument("--before", type=Path, help="another checkout: its dask (and ray) learn beside this one's")
    parser.add_argument("--starts", type=int, metavar="ROUNDS",
                        help="only time a local Dask cluster's start, spawned and forked, over ROUNDS rounds")
    args = parser.parse_args(argv)
    if args.ray_worker_niceness is not None:  # read by every raylet started from here: the head's, a local Ray's
        os.environ["RAY_worker_niceness"] = str(args.ray_worker_niceness)
    if args.starts:
        write_summary(args.out, {"starts": starts(args.starts), "cores": os.cpu_count()})
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="learn-distributed-"))
    try:
        base = tmp / "sessions"
        ingest_files("tau2", [data_root() / "tau2" / "trajectories"], base)
        print(f"{os.cpu_count()} cores; wall s best of {args.rounds} rounds (cluster start included; "
              "its start said apart); ×: plain's wall over this way's")
        rows = measure(args, tmp, base)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_summary(args.out, {"rows": rows, "apps": APPS, "rounds": args.rounds, "cores": os.cpu_count(),
                             "python": sys.version.split()[0]})
    return 0 if all(r["same_bytes"] for row in rows for rs in row["rounds"].values() for r in rs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
