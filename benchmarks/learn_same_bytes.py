"""Whether this checkout learns the very bytes another commit learns, beyond τ² retail and airline.

A change made for speed must not move a flow. `learn_speed.py` checks the two apps it times;
this checks the others a change could move differently: each checkout (this one, and
`--before`'s beside it) ingests τ² (retail, airline, telecom) and AgentDojo suites with its own
code, learns each app's train split as `stretto learn` does (`flow.stream.learn_chosen`), and
writes each flow; the files are then compared byte for byte. Nothing is timed.

Printed: one line per app, `same` or `DIFFERS` (and the sessions learned); exit 1 when any
differs.

    python benchmarks/learn_same_bytes.py [--before 5da6638] [--suites banking,slack] [--out bench-out/learn_same_bytes.json]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from side_by_side import checkout, describe, finish, flows_identical, start
from summary_file import write_summary

TAU2_APPS = ("tau2/retail", "tau2/airline", "tau2/telecom")

PROBE = r"""
import json, os, shutil, sys, tempfile
from pathlib import Path
os.environ["STRETTO_PROGRESS"] = "0"
from stretto_core.flow.ir import save_flow
from stretto_core.flow.stream import choose, learn_chosen
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
out, suites = Path(sys.argv[1]), [s for s in sys.argv[2].split(",") if s]
apps = sys.argv[3:]
store = Path(tempfile.mkdtemp())
try:
    ingest_files("tau2", [data_root() / "tau2" / "trajectories"], store / "tau2")
    runs = data_root() / "agentdojo" / "runs"
    for suite in suites:  # every model's run of the suite
        ingest_files("agentdojo", sorted(str(p) for p in runs.glob(f"*/{suite}")), store / suite)
    learned = {}
    for app in apps + [f"agentdojo/{s}" for s in suites]:
        chosen = choose([str(store / (app.split("/")[1] if app.startswith("agentdojo/") else "tau2"))], "train",
                        apps=[app])
        save_flow(learn_chosen(chosen), str(out / (app.replace("/", "-") + ".flow.json")))
        learned[app] = len(chosen.files)
    print(json.dumps(learned))
finally:
    shutil.rmtree(store, ignore_errors=True)
"""
"""Learns each app's train split with the checkout's own code; one JSON line: app -> sessions."""


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--before", default="HEAD~1", help="the commit (or a checkout's folder) to compare with")
    options.add_argument("--suites", default="banking,slack", help="AgentDojo suites, comma-separated")
    options.add_argument("--out", default="bench-out/learn_same_bytes.json")
    args = options.parse_args(argv)
    here = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp_name, checkout(args.before) as before:
        tmp = Path(tmp_name)
        dirs = {who: tmp / who for who in ("before", "after")}
        for folder in dirs.values():
            folder.mkdir()
        procs = {who: start(code, PROBE, [dirs[who], args.suites, *TAU2_APPS])
                 for who, code in (("before", before), ("after", here))}
        learned = {who: finish(proc, who) for who, proc in procs.items()}
        same = {app: flows_identical(dirs["before"] / f"{app.replace('/', '-')}.flow.json",
                                     dirs["after"] / f"{app.replace('/', '-')}.flow.json")
                for app in learned["after"]}
    print(f"flows learned from each train split, this checkout against {describe(args.before)}:")
    for app, ok in same.items():
        print(f"  {app}: {'same' if ok else 'DIFFERS'} ({learned['after'][app]} sessions)")
    write_summary(args.out, {"before": describe(args.before), "sessions": learned["after"], "identical": same})
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
