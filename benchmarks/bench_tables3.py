"""The paper's Table 3 and Table 3b rows as `stretto bench` makes them, without the bench's other stages.

    python benchmarks/bench_tables3.py --data DATA --out OUT [--draws 1000]
    python benchmarks/bench_tables3.py --compare BEFORE.json AFTER.json

The first form ingests τ²-bench, AgentDojo and WorkBench from DATA into OUT/sessions, freezes the
split, learns each test agent's speculator from other agents' train sessions and replays the test
episodes from the record at θ = 0.3 with both speculators: the bench's own functions
(`evaluate/measure/bench*.py`) in the bench's order, so the rows are the ones `stretto bench` prints
(its record-against-environment, sweep, curves, cross-harness and ablation stages are left out:
they do not change these rows). Prints both tables and writes OUT/tables3.json. Run it once per
side of a change (the code under test is whatever `stretto_core` imports).

The second form prints each row of both files side by side, before → after, with 95% intervals,
and marks a row whose after is worse beyond the before's interval (fewer turns saved than its lower
bound, or more detours per episode than its upper bound); it exits 1 when one is.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from stretto_core.evaluate.measure.bench import OTHERS, POOLED_NAMES, TAU2, _data_root
from stretto_core.evaluate.measure.bench_data import ingest_all, load_corpora
from stretto_core.evaluate.measure.bench_plan import FlowCache, plan_domain
from stretto_core.evaluate.measure.bench_report import _table3b
from stretto_core.evaluate.measure.bench_stages import counted_costs, replay_both
from stretto_core.evaluate.measure.bootstrap import format_interval
from stretto_core.evaluate.measure.metrics import compare_speculators, costs_for, merge_results, render_comparisons
from stretto_core.serve.speculator import DEFAULT_THETA


def run(data: Path, out: Path, draws: int) -> dict[str, Any]:
    started = time.perf_counter()
    table3, table3b = [], []
    with _data_root(data.resolve()):
        ingest_all(data.resolve(), out / "sessions")
        corpora, _ = load_corpora(out / "sessions", out / "split.json", data.resolve())
        flows = FlowCache()
        for name, corpus in corpora.items():
            pooled: dict[str, list] = {"next": [], "use": []}
            for domain in corpus.domains():
                plan = plan_domain(corpus, domain, flows)
                if not plan.assignments:
                    continue
                if name == TAU2:
                    record = replay_both(plan, DEFAULT_THETA, weigh=True)
                    priced = costs_for(domain, counted_costs(plan, record["use"]))
                    table3.append(compare_speculators(record["next"], record["use"], priced, group=plan.label(),
                                                      draws=draws))
                else:
                    record = replay_both(plan, DEFAULT_THETA)
                    for policy in pooled:
                        pooled[policy].append(record[policy])
                    table3b.append(compare_speculators(record["next"], record["use"], None, group=plan.label(),
                                                       draws=draws))
            if name in OTHERS and len(pooled["use"]) > 1:
                table3b.append(compare_speculators(merge_results(pooled["next"]), merge_results(pooled["use"]), None,
                                                   group=POOLED_NAMES[name], draws=draws))
    print("τ²-bench, both speculators at θ = 0.3 (Table 3):\n" + render_comparisons(table3))
    print("\nAgentDojo and WorkBench (Table 3b):\n" + _table3b(table3b))
    print(f"\n{time.perf_counter() - started:.0f} s wall time")
    return {"table3": [c.model_dump() for c in table3], "table3b": [c.model_dump() for c in table3b]}


def _cell(m: dict[str, Any], name: str, scale: float, digits: int, unit: str = "") -> str:
    return format_interval(_interval(m[name]), scale, digits, unit)


def _interval(raw: dict[str, Any] | None) -> Any:
    from stretto_core.evaluate.measure.bootstrap import Interval

    return None if raw is None else Interval(**raw)


def compare(before_path: Path, after_path: Path) -> int:
    before, after = (json.loads(Path(p).read_text(encoding="utf-8")) for p in (before_path, after_path))
    worse = 0
    print("| table | group | speculator | turns saved, before → after | detours / episode, before → after | "
          "saved · detours (lookups), before → after | worse beyond the interval |\n|---|---|---|---|---|---|---|")
    for table in ("table3", "table3b"):
        rows_before = {r["group"]: r for r in before[table]}
        for r in after[table]:
            b = rows_before.get(r["group"])
            for side, label in (("a", "next step"), ("b", "use before write")):
                m_after = r[side]
                m_before = b[side] if b else None
                flag = ""
                if m_before is not None:
                    ts, dp = m_before["turns_saved"], m_before["detours_per_episode"]
                    if ts["low"] is not None and m_after["turns_saved"]["point"] < ts["low"] - 1e-12:
                        flag = "fewer turns saved"
                    if dp["high"] is not None and m_after["detours_per_episode"]["point"] > dp["high"] + 1e-12:
                        flag = (flag + ", " if flag else "") + "more detours"
                worse += bool(flag)
                was = (f"{_cell(m_before, 'turns_saved', 100, 1, '%')} → " if m_before else "– → ")
                was_d = (f"{_cell(m_before, 'detours_per_episode', 1, 2)} → " if m_before else "– → ")
                counts = (f"{m_before['saved']} · {m_before['detours']} ({m_before['lookups']}) → " if m_before else "– → ")
                print(f"| {table} | {r['group']} | {label} | {was}{_cell(m_after, 'turns_saved', 100, 1, '%')} | "
                      f"{was_d}{_cell(m_after, 'detours_per_episode', 1, 2)} | "
                      f"{counts}{m_after['saved']} · {m_after['detours']} ({m_after['lookups']}) | {flag or 'no'} |")
    print(f"\n{worse} row(s) worse beyond the before's 95% interval")
    return 1 if worse else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if args.data is None or args.out is None:
        parser.error("--data and --out (or --compare BEFORE AFTER)")
    args.out.mkdir(parents=True, exist_ok=True)
    rows = run(args.data, args.out, args.draws)
    (args.out / "tables3.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(f"wrote {args.out / 'tables3.json'}")


if __name__ == "__main__":
    main()
