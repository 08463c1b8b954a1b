"""What `learn --recalibrate` costs over a plain learn, with each part's flow learned whole and with cells counted once.

    python benchmarks/recalibrate_cost.py --sessions DIR --apps tau2/retail,tau2/airline [--split train]
        [--json OUT]

DIR holds ingested sessions (`stretto ingest`). For each app, on its train sessions (the split is
the bench's), in this one process, side by side in CPU time: a plain learn; the site calibration
as it was (`calibrate_sites` learning each part's flow whole: folds × held-out agents flows); and
with each (agent, fold) cell counted once and the parts' flows added from the cells
(`count_flow=`, `evaluate/site_calibration.py`). The two calibrations must agree site by site
(the script fails loudly otherwise). Prints seconds and the ratios to the plain learn.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from variant_diff import load_corpus
from stretto_core.evaluate.site_calibration import calibrate_sites
from stretto_core.flow.ir import count_sessions, learn, manifest_of_sessions
from stretto_core.flow.site_calibration import SiteCalibration
from stretto_core.sessions.agents import agent_key


def same(a: SiteCalibration, b: SiteCalibration) -> bool:
    keys = [(s.tool, s.site, s.source, s.mention, s.weighed, s.used) for s in a.sites]
    return keys == [(s.tool, s.site, s.source, s.mention, s.weighed, s.used) for s in b.sites] and all(
        math.isclose(x.score, y.score, rel_tol=1e-9, abs_tol=1e-12) for x, y in zip(a.sites, b.sites))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True)
    parser.add_argument("--apps", required=True)
    parser.add_argument("--split", default="train")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    corpus = load_corpus(args.sessions)
    rows = []
    print("| app | sessions | agents | learn (s) | recalibrate as it was (s) | × learn | with cells (s) | × learn "
          "| speed-up |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for app in args.apps.split(","):
        sessions = corpus.on(args.split, app)
        if not sessions:
            raise SystemExit(f"no {args.split} sessions of {app} in {args.sessions}")
        t0 = time.process_time()
        learn(sessions)
        t1 = time.process_time()
        whole = calibrate_sites(sessions, lambda part: learn(list(part)))
        t2 = time.process_time()
        cells = calibrate_sites(sessions, lambda part: learn(list(part)),
                                count_flow=lambda part: count_sessions(list(part), manifest_of_sessions(part)))
        t3 = time.process_time()
        if not same(whole, cells):
            raise SystemExit(f"{app}: the cells' calibration differs from learning each part whole")
        plain, old, new = t1 - t0, t2 - t1, t3 - t2
        row = {"app": app, "sessions": len(sessions), "agents": len({agent_key(s.header.agent_model) for s in sessions}),
               "learn_s": plain, "recalibrate_whole_s": old, "recalibrate_cells_s": new,
               "ratio_whole": (plain + old) / plain, "ratio_cells": (plain + new) / plain, "speedup": old / new,
               "sites": len(cells.sites)}
        rows.append(row)
        print(f"| {app} | {row['sessions']} | {row['agents']} | {plain:.1f} | {old:.1f} | ×{row['ratio_whole']:.1f} | "
              f"{new:.1f} | ×{row['ratio_cells']:.1f} | ×{row['speedup']:.1f} |")
    print("\n× learn: (learn + calibration) / learn, CPU time in one process; the two calibrations agree site by site")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
