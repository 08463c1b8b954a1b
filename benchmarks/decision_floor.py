"""A decision against its floor, and observe + decide, before → after side by side (issue 30, goal 4).

The floor of a decision is what the same decision costs when nothing is left to derive: asked
again at once, with nothing observed between, every view of the results the binding reads
(naming, mention flags, record words) and every reach the speculator reads is cached, so what
is left is the ranking and the reading of those caches. A decision "within k× of its floor" costs
at most k times that. Each checkout's code (this one and `--before`'s, side by side, the same
load on both) learns a flow from τ² retail train, walks every retail test session through the
engine once to warm the flow's caches (as a serving process has), then walks them again: after
each tool result (the agent's, or a lookup's made from the record as replay does), CPU time of
the observe, of the decision, and of the same decision asked again (the floor). The two answers
must agree (the benchmark fails otherwise: asking again must not move a decision).

Printed per side: decisions, decide p50/p99, floor p50, the ratio of their sums and the median
of per-decision ratios, and the observe + decide p99 (the issue's yardstick: ≤ 0.3 ms).

    python benchmarks/decision_floor.py [--before HEAD~1] [--rounds 3] [--out bench-out/decision_floor.json]
"""

from __future__ import annotations


from side_by_side import (run_summary, RETAIL, best, checkout, describe, load_note, parser, ratio_median, retail_source,
                          side_by_side)
from summary_file import write_summary

PROBE = RETAIL + r"""
import json, statistics, time
from stretto_core.flow.ir import learn
from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import LLMTurn, ToolResult
from stretto_core.sessions.state import call_key
from decision_latency import recorded_results  # this checkout's benchmarks folder, on both probes' path
clock = time.process_time
engine = Engine(FlowRuntime(learn(train)), EngineConfig())

def walk(session, out):
    es = engine.session(live_manifest=session.header.manifest)
    calls = {c.call_id for e in session.events if isinstance(e, LLMTurn) for c in e.calls}
    known = recorded_results(session)
    def step(observe):
        t0 = clock(); observe(); t1 = clock(); first = es.decide(); t2 = clock(); again = es.decide(); t3 = clock()
        same = (first is None) == (again is None) and (first is None or (first.tool, first.arguments) == (again.tool, again.arguments))
        out.append((t1 - t0, t2 - t1, t3 - t2, same))
        return first
    for event in session.events:
        if not (isinstance(event, ToolResult) and event.call_id in calls):
            es.observe(event)
            continue
        decision = step(lambda: es.observe(event))
        while decision is not None:
            content, error = known.get(call_key(decision.tool, decision.arguments), ("{}", False))
            decision = step(lambda: es.add_lookup(decision, content, error, event.call_id))

for s in test:
    walk(s, [])
steps = []
for s in test:
    walk(s, steps)
def pct(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
decide = [d for _, d, _, _ in steps]
floor = [f for _, _, f, _ in steps]
pairs = [o + d for o, d, _, _ in steps]
ratios = [d / f for d, f in zip(decide, floor) if f > 0]
print(json.dumps({"decisions": len(steps), "moved": sum(1 for *_, same in steps if not same),
                  "decide_p50_ms": 1e3 * pct(decide, 0.5), "decide_p99_ms": 1e3 * pct(decide, 0.99),
                  "floor_p50_ms": 1e3 * pct(floor, 0.5), "floor_p99_ms": 1e3 * pct(floor, 0.99),
                  "times_floor_of_sums": sum(decide) / sum(floor), "times_floor_median": statistics.median(ratios),
                  "pair_p50_ms": 1e3 * pct(pairs, 0.5), "pair_p99_ms": 1e3 * pct(pairs, 0.99),
                  "decide_ms_total": 1e3 * sum(decide)}))
"""
"""A flow learned from retail train, the test sessions walked twice; one JSON line of the second walk."""


def main(argv: list[str] | None = None) -> int:
    options = parser(__doc__, "bench-out/decision_floor.json", rounds=3)
    args = options.parse_args(argv)
    with checkout(args.before) as before:
        load = load_note()
        rounds = side_by_side(PROBE, [retail_source()], before, args.rounds)
    moved = {who: max(r[who]["moved"] for r in rounds) for who in ("before", "after")}
    keys = ("decide_p50_ms", "decide_p99_ms", "floor_p50_ms", "times_floor_of_sums", "times_floor_median",
            "pair_p50_ms", "pair_p99_ms")
    summary = run_summary(
        args.before, load, rounds, app="tau2/retail", split="test (walked), train (learned)",
        load_at_end=load_note(), moved_on_asking_again=moved, decisions=rounds[0]["after"]["decisions"],
        goal_pair_p99_ms=0.3, goal_times_floor=5.0,
        **{f"{who}_{k}_best": best(rounds, who, k) for who in ("before", "after") for k in keys},
        decide_total_ratio_median=ratio_median(rounds, "decide_ms_total"))
    print(f"τ² retail test, {summary['decisions']} decisions, CPU ms, best of {args.rounds} rounds side by side "
          f"({load}; at the end {summary['load_at_end']}):")
    for who in ("before", "after"):
        b = {k: summary[f"{who}_{k}_best"] for k in keys}
        print(f"  {who:6} decide p50 {b['decide_p50_ms']:.3f} p99 {b['decide_p99_ms']:.3f}; floor p50 "
              f"{b['floor_p50_ms']:.3f}; ×{b['times_floor_of_sums']:.1f} its floor (sums), ×{b['times_floor_median']:.1f} "
              f"(median decision); observe+decide p50 {b['pair_p50_ms']:.3f} p99 {b['pair_p99_ms']:.3f} (goal ≤ 0.3)")
    print(f"  before: {describe(args.before)}; all decisions' CPU before/after ×{summary['decide_total_ratio_median']:.2f} "
          "(median round)")
    write_summary(args.out, summary)
    if any(moved.values()):
        raise SystemExit(f"decision_floor: a decision asked again at once came out different: {moved}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
