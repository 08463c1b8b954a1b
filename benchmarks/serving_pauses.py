"""Pauses with many sessions open: the worst response and the collections inside responses,
before → after, side by side (issue 30, goal 1).

A long-lived server serves `--sessions` τ² retail test sessions one after another (the test
sessions cycled), every one kept open, through `Stretto` (the adapters' entry point: a flow file
loaded, the tools' kinds from the sessions' manifest, nothing recorded, lookups answered from the
record). Each of the agent's tool results is one response: its CPU time, and every garbage
collection that ran inside it (`gc.callbacks`), are measured. The "after" code serves as a
long-lived server would with `serve/pauses.py`: `settle()` after the flow loaded, and a
`Collector` run after each response (its collections timed apart: off the request path). The
"before" code serves with CPython's own schedule. Both run at the same time, round after round.

Also printed: tracked containers per open session (what a full collection scans; the memory a
served session holds is `serving_memory.py`'s).

    python benchmarks/serving_pauses.py [--before HEAD~1] [--sessions 2000] [--rounds 1] [--out bench-out/serving_pauses.json]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from side_by_side import run_summary, RETAIL, best, checkout, load_note, parser, retail_source, side_by_side
from summary_file import write_summary

PROBE = RETAIL + r"""
import gc, json, time
from stretto_core.flow.ir import learn, save_flow
from stretto_core.serve.live import Stretto
from stretto_core.sessions.model import LLMTurn, ToolResult, UserMessage
from stretto_core.sessions.state import call_key
try:
    from stretto_core.serve import pauses
except ImportError:
    pauses = None
flow_path, n = sys.argv[2], int(sys.argv[3])
save_flow(learn(train), flow_path)  # learned and written by this checkout's own code
del train, _sessions
stretto = Stretto(flow_path, manifest=test[0].header.manifest, store=False, per_session=10 ** 9,
                  lookup_timeout=600.0, call_budget=600.0)  # no lookup cut by a time limit under load
collector = None
if pauses is not None:
    pauses.settle()
    collector = pauses.Collector().start()
clock = time.process_time
collections = []  # (generation, cpu seconds, inside a response)
inside = [False]
begun = {}
def watch(phase, info):
    if phase == "start":
        begun["t"] = clock()
    else:
        collections.append((info["generation"], clock() - begun["t"], inside[0]))
plans = []
for s in test:
    calls = {c.call_id: c for e in s.events if isinstance(e, LLMTurn) for c in e.calls}
    known = {}
    for e in s.events:
        if isinstance(e, ToolResult) and e.call_id in calls:
            known.setdefault(call_key(calls[e.call_id].tool, calls[e.call_id].arguments), e.content)
    plans.append((s, calls, known))
gc.collect()
base_objects = len(gc.get_objects()) + gc.get_freeze_count()
gc.callbacks.append(watch)  # the collections of serving alone
responses, lookups, opened = [], 0, []
first_session = 0  # responses of the first session (lazy imports, first indexes: once a process)
off_path = 0.0
started = clock()
for k in range(n):
    s, calls, known = plans[k % len(plans)]
    live = stretto.session(f"s{k}")
    opened.append(live)
    answer = lambda tool, args, known=known: known.get(call_key(tool, args), "{}")
    for e in s.events:
        if isinstance(e, UserMessage):
            live.user(e.text)
        elif isinstance(e, LLMTurn):
            live.llm_turn(e.text, e.calls)
        elif isinstance(e, ToolResult) and e.call_id in calls:
            c = calls[e.call_id]
            inside[0] = True
            t = clock()
            live.after_tool_sync(e.call_id, c.tool, c.arguments, e.content, answer, error=e.error)
            responses.append(clock() - t)
            if k == 0:
                first_session = len(responses)
            inside[0] = False
            if collector is not None:
                t = clock()
                collector.between_requests()
                off_path += clock() - t
    lookups += len(live.lookups)
total = clock() - started
gc.callbacks.remove(watch)
objects = len(gc.get_objects()) + gc.get_freeze_count() - base_objects
ordered = sorted(responses)
pct = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]
on_path = [c for c in collections if c[2]]
print(json.dumps({
    "schedule": "settle + Collector" if collector is not None else "CPython's own",
    "sessions": n, "responses": len(responses), "lookups": lookups,
    "response_p50_ms": 1e3 * pct(0.5), "response_p99_ms": 1e3 * pct(0.99), "worst_response_ms": 1e3 * ordered[-1],
    "worst_warm_response_ms": 1e3 * max(responses[first_session:], default=0.0),
    "collections_in_responses": len(on_path),
    "worst_collection_in_response_ms": 1e3 * max((c[1] for c in on_path), default=0.0),
    "full_collections_in_responses": sum(1 for c in on_path if c[0] == 2),
    "collection_cpu_in_responses_ms": 1e3 * sum(c[1] for c in on_path),
    "collection_cpu_off_path_ms": 1e3 * off_path,
    "total_cpu_s": total, "collection_share": sum(c[1] for c in collections) / total,
    "tracked_containers_per_session": objects / n}))
"""

KEYS = [("worst_response_ms", "worst response, ms CPU"),
        ("worst_warm_response_ms", "worst response after the first session, ms"), ("response_p99_ms", "response p99, ms"),
        ("response_p50_ms", "response p50, ms"), ("collections_in_responses", "collections inside responses"),
        ("full_collections_in_responses", "full collections inside responses"),
        ("worst_collection_in_response_ms", "worst collection inside a response, ms"),
        ("collection_cpu_in_responses_ms", "collection CPU inside responses, ms"),
        ("collection_cpu_off_path_ms", "collection CPU between responses, ms"),
        ("collection_share", "share of serving CPU collecting"),
        ("tracked_containers_per_session", "tracked containers per open session")]


def main(argv: list[str] | None = None) -> int:
    options = parser(__doc__, "bench-out/serving_pauses.json", rounds=1)
    options.add_argument("--sessions", type=int, default=2000, help="sessions served and kept open")
    args = options.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_name, checkout(args.before) as before:
        load = load_note()
        rounds = side_by_side(PROBE, [retail_source(), Path(tmp_name) / "{who}.flow.json", args.sessions],
                              before, args.rounds)
    if rounds[0]["before"]["lookups"] != rounds[0]["after"]["lookups"]:
        raise SystemExit(f"serving_pauses: before and after made different lookups: "
                         f"{rounds[0]['before']['lookups']} vs {rounds[0]['after']['lookups']}")
    summary = run_summary(args.before, load, rounds, sessions=args.sessions)
    r = rounds[0]
    print(f"{args.sessions} τ² retail test sessions served and kept open ({r['after']['responses']} responses, "
          f"{r['after']['lookups']} lookups, the same before and after); {load}; "
          f"best of {args.rounds} round(s) run side by side")
    print(f"  before: {summary['before']} ({r['before']['schedule']}); after: this checkout ({r['after']['schedule']})")
    for key, label in KEYS:
        b, a = best(rounds, "before", key), best(rounds, "after", key)
        summary[key] = {"before": b, "after": a}
        print(f"  {label:46s} {b:10.3f} → {a:10.3f}")
    write_summary(args.out, summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
