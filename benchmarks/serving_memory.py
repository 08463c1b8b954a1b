"""Memory per served session, and decision time against the session's length (issue 14).

Learns a flow per τ² domain from the train split in STRETTO_DATA, then serves

- every test-split session (typical sessions), keeping all of them alive, and measures the
  memory they hold (tracemalloc, after a garbage collection) per session;
- long sessions: about 10, 100 and 1,000 tool results of retail test sessions played one after
  another in one session (each with its own user messages), then the same probe (the first
  `PROBE` test sessions, about 110 tool results); it measures the session's memory at its end,
  and, on the probe, the CPU time of each step of Algorithm 1 (a result observed, the agent's or
  a lookup's, and the decision after it; lookups answered from the record) after 10, 100 or
  1,000 results: every step (`pair`), the probe's own tool results alone (`own`: the same
  events at every length; the lookups after them differ with what the session passed before),
  and the whole probe's CPU time. Each length's probe is timed `ROUNDS` times, the lengths taking
  turns, each step keeping its quickest time (the machine's other jobs then weigh on no length).

Each is run twice in one process: as a served session (`Engine.session()`: the bounded state)
and with the full state (`served=False`, what replay keeps), and the decisions of the two must
be the same on every test session (the benchmark fails otherwise). A long session may pass a
bound of the served state (the 1,000-result one: its user text passes `SERVED_USER_TEXT`); its
lookups may then differ, and how many do is counted and printed (it fails only when they differ
on a session that passed no bound). The per-session lookup budget is lifted so that decisions are made all along.
On a checkout without the bounded state both runs are the full state (to measure "before").

    python benchmarks/serving_memory.py [--out bench-out/serving_memory.json] [--lengths 10 100 1000]
"""

from __future__ import annotations

import argparse
import difflib
import gc
import inspect
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from decision_latency import percentile, recorded_results

from stretto_core.flow.ir import learn
from stretto_core.paths import data_root
from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.model import Event, LLMTurn, Session, ToolResult, UserMessage
from stretto_core.sessions.splits import split_of
from stretto_core.sessions import state as state_module
from stretto_core.sessions.state import call_key
from stretto_core.sessions.store import load_sessions
from summary_file import write_summary

HAS_SERVED = "served" in inspect.signature(Engine.session).parameters

MANIFESTS: dict[int, object] = {}
"""Engine -> the manifest its domain's sessions carry: each served session's authority on reads."""


def new_session(engine: Engine, served: bool, manifest=None):
    """A session with `manifest` as its authority on reads (as replay gives each episode its own)."""
    if HAS_SERVED:
        return engine.session(live_manifest=manifest, served=served)
    return engine.session(live_manifest=manifest)


def play(engine: Engine, events: list[Event], known: dict, served: bool, timed: bool = False, manifest=None):
    """Serve `events` (lookups answered from the record); returns the session, its lookups, and
    per step of Algorithm 1 after an agent's tool result (tool results held so far, CPU seconds
    of observing a result, the agent's or a lookup's, and of the decision after it)."""
    es = new_session(engine, served, manifest or MANIFESTS.get(id(engine)))
    agent_calls = {c.call_id for e in events if isinstance(e, LLMTurn) for c in e.calls}
    made: list[tuple[str, str, float]] = []
    times: list[tuple[int, float, float, bool]] = []
    held = 0
    clock = time.process_time

    def step(observe, agent: bool = False):
        t0 = clock()
        observe()
        t1 = clock()
        decision = es.decide()
        if timed:
            times.append((held, t1 - t0, clock() - t1, agent))
        return decision

    for event in events:
        if not (isinstance(event, ToolResult) and event.call_id in agent_calls):
            es.observe(event)
            continue
        held += 1
        decision = step(lambda: es.observe(event), agent=True)
        while decision is not None:
            content, error = known.get(call_key(decision.tool, decision.arguments), ("{}", False))
            lookup = None

            def absorb() -> None:
                nonlocal lookup
                lookup = es.add_lookup(decision, content, error, event.call_id)
            decision = step(absorb)
            made.append((lookup.tool, call_key(lookup.tool, lookup.arguments), round(lookup.score or 0.0, 9)))
    return es, made, times


PROBE = 8
"""The long sessions end on the same retail test sessions (the probe), so that each length times the same work."""


def long_session(test: list[Session], results: int) -> tuple[list[Event], dict, int]:
    """Test sessions played one after another until `results` agent tool results, then the probe
    (the first `PROBE` test sessions); call ids kept apart. Returns the events, the recorded
    results, and the number of tool results before the probe."""
    out: list[Event] = []
    known: dict = {}
    count = 0
    plan = [test[PROBE + k % (len(test) - PROBE)] for k in range(10 ** 6)]

    def add(k: int, session: Session) -> None:
        known.update(recorded_results(session))
        for e in session.events:
            if isinstance(e, (LLMTurn, UserMessage)):
                e = e.model_copy(update={"calls": [c.model_copy(update={"call_id": f"{k}-{c.call_id}"})
                                                   for c in e.calls]})
            elif isinstance(e, ToolResult):
                e = e.model_copy(update={"call_id": f"{k}-{e.call_id}"})
            out.append(e)

    k = 0
    while count < results:
        add(k, plan[k])
        count += sum(isinstance(e, ToolResult) for e in plan[k].events)
        k += 1
    for j, session in enumerate(test[:PROBE]):
        add(k + j, session)
    return out, known, count


def held_bytes(build) -> tuple[int, object]:
    """Bytes still allocated after `build()` returns what it keeps (after a collection); indexes
    shared between sessions (identical results) are counted once, with the sessions, and the
    process-wide caches' other entries (at most `INDEX_CACHE` focused and `FULL_INDEX_CACHE` full
    indexes) are not counted."""
    clear_index_caches()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    TRACKED["before"] = len(gc.get_objects())
    kept = build()
    clear_index_caches()  # what the sessions hold of the shared indexes stays, counted; the caches' rest goes
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    TRACKED["after"] = len(gc.get_objects())
    tracemalloc.stop()
    return after - before, kept


TRACKED: dict[str, int] = {}
"""Containers the collector tracks, before and after the last `held_bytes` (what a full collection
scans: fewer per session, shorter pauses)."""


def typical(engines: dict, tests: dict, served: bool) -> dict:
    """Memory per session over every test session of each domain, all kept alive."""
    rows = {}
    for domain, engine in engines.items():
        test = tests[domain]
        for s in test:  # warm the flow's caches first, so they are not counted
            play(engine, s.events, recorded_results(s), served)
        size, kept = held_bytes(lambda: [play(engine, s.events, recorded_results(s), served)[0] for s in test])
        rows[domain] = {"sessions": len(test), "kb_per_session": size / len(test) / 1024,
                        "tracked_per_session": (TRACKED["after"] - TRACKED["before"]) / len(test)}
        del kept
    return rows


ROUNDS = 3
"""Each length's probe is timed this many times, the lengths taking turns, and each step keeps its
quickest time: on a machine shared with other jobs, the same work then compares across lengths."""


def lengths_run(engine: Engine, test: list[Session], lengths: list[int], served: bool,
                rounds: int = ROUNDS) -> list[dict]:
    played, sizes = {}, {}
    for n in lengths:
        events, known, before = long_session(test, n)
        play(engine, events, known, served)  # warm
        size, kept = held_bytes(lambda: play(engine, events, known, served)[0])
        del kept
        played[n], sizes[n] = (events, known, before), size
    timed: dict[int, list] = {n: [] for n in lengths}
    for _ in range(rounds):
        for n in lengths:
            events, known, _ = played[n]
            clear_index_caches()  # no result indexed already (by the previous length's probe)
            timed[n].append(play(engine, events, known, served, timed=True))
    rows = []
    for n in lengths:
        before = played[n][2]
        made = timed[n][0][1]
        runs = [[t for t in times if t[0] > before] for _, _, times in timed[n]]  # the probe, each round
        tail = [min(steps, key=lambda t: t[1] + t[2]) for steps in zip(*runs)]  # each step's quickest
        pair = [o + d for _, o, d, _ in tail]
        # The same work at every length: each of the probe's own tool results observed and the
        # decision after it (the lookups after that differ with what the session passed before).
        agent = [o + d for _, o, d, own in tail if own]
        rows.append({"results": n, "results_before_probe": before, "probe_results": len(tail),
                     "kb": sizes[n] / 1024, "lookups": len(made), "rounds": rounds,
                     "pair_p50_ms": 1e3 * percentile(pair, 0.5), "pair_p99_ms": 1e3 * percentile(pair, 0.99),
                     "agent_pair_p50_ms": 1e3 * percentile(agent, 0.5),
                     "agent_pair_mean_ms": 1e3 * statistics.fmean(agent),
                     "probe_cpu_ms": 1e3 * sum(pair),
                     "observe_mean_ms": 1e3 * statistics.fmean(o for _, o, _, _ in tail),
                     "decide_mean_ms": 1e3 * statistics.fmean(d for _, _, d, _ in tail),
                     "decide_p99_ms": 1e3 * percentile([d for _, _, d, _ in tail], 0.99)})
    return rows


def clear_index_caches() -> None:
    clear = getattr(state_module, "clear_index_caches", None)
    if clear is not None:
        clear()


def bounds_passed(es) -> list[str]:
    """The bounds of a served state this session went past (`sessions/state.py`): where its
    decisions may differ from the full state's."""
    state = es.state
    passed = []
    if state.user.dropped:
        passed.append(f"user text over {state_module.SERVED_USER_TEXT} characters "
                      f"({state.user.dropped} oldest messages dropped)")
    if len(state.result_for) >= state_module.SERVED_CALL_RESULTS:
        passed.append(f"{state_module.SERVED_CALL_RESULTS} calls' results remembered")
    if len(state.seen_values) >= state_module.SERVED_SEEN or len(state.given) >= state_module.SERVED_SEEN:
        passed.append(f"{state_module.SERVED_SEEN} key-like values seen or given")
    return passed


def differing(a: list, b: list) -> dict:
    """How the lookups of the served state (`a`) and of the full state (`b`) differ: those of
    each not matched in the other (`difflib`'s longest matching blocks, in order), and the first
    place they part."""
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    same = sum(block.size for block in matcher.get_matching_blocks())
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return {"served_lookups": len(a), "full_lookups": len(b), "only_served": len(a) - same,
            "only_full": len(b) - same, "differing": max(len(a), len(b)) - same,
            "first_difference": first + 1 if a != b else None}


def same_decisions(engines: dict, tests: dict, test: list[Session], lengths: list[int]) -> dict:
    """Lookups compared between the served and the full state. Within the served state's bounds
    (every typical session) they must be the same, or the benchmark fails; a long session that
    goes past a bound may decide differently, and how many lookups differ is counted."""
    compared = 0
    for domain, engine in engines.items():
        for s in tests[domain]:
            a = play(engine, s.events, recorded_results(s), True)[1]
            b = play(engine, s.events, recorded_results(s), False)[1]
            if a != b:
                raise SystemExit(f"served and full states decide differently on {s.header.session_id}")
            compared += len(a)
    long_rows = []
    for n in lengths:
        events, known, _ = long_session(test, n)
        served, a, _ = play(engines["retail"], events, known, True)
        b = play(engines["retail"], events, known, False)[1]
        row = {"results": n, "bounds_passed": bounds_passed(served), **differing(a, b)}
        if a != b and not row["bounds_passed"]:
            raise SystemExit(f"served and full states decide differently on the {n}-result session, "
                             f"which passed no bound of the served state")
        long_rows.append(row)
    return {"typical_lookups_same": compared, "long_sessions": long_rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench-out/serving_memory.json")
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 100, 1000])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ingest_files("tau2", [data_root() / "tau2" / "trajectories"], Path(tmp))
        sessions = load_sessions([Path(tmp)])
    engines, tests = {}, {}
    for domain in ("airline", "retail", "telecom"):
        app = f"tau2/{domain}"
        train = [s for s in sessions if s.header.app == app and split_of(s.header) == "train"]
        tests[domain] = [s for s in sessions if s.header.app == app and split_of(s.header) == "test"]
        engines[domain] = Engine(FlowRuntime(learn(train)), EngineConfig(per_session=10 ** 9))
        MANIFESTS[id(engines[domain])] = tests[domain][0].header.manifest
    summary: dict = {"bounded_state": HAS_SERVED, "python": sys.version.split()[0]}
    for name, served in (("served", True), ("full", False)):
        summary[name] = {"typical": typical(engines, tests, served),
                         "by_length": lengths_run(engines["retail"], tests["retail"], args.lengths, served)}
    summary["decisions"] = (same_decisions(engines, tests, tests["retail"], args.lengths) if HAS_SERVED
                            else {"typical_lookups_same": 0, "long_sessions": []})
    summary["lookups_compared"] = summary["decisions"]["typical_lookups_same"]
    for name in ("served", "full"):
        part = summary[name]
        typical_kb = ", ".join(f"{d} {r['kb_per_session']:.1f}" for d, r in part["typical"].items())
        tracked = ", ".join(f"{d} {r['tracked_per_session']:.1f}" for d, r in part["typical"].items())
        print(f"{name}: KB per τ² test session: {typical_kb}; tracked containers per session: {tracked}")
        print(f"  {'results':>7} {'KB':>9} {'lookups':>8} {'pair p50':>9} {'pair p99':>9} {'obs mean':>9} {'dec p99':>8}"
              f" {'own p50':>8} {'own mean':>8} {'probe':>7}  (ms, CPU)")
        for r in part["by_length"]:
            print(f"  {r['results']:7d} {r['kb']:9.1f} {r['lookups']:8d} {r['pair_p50_ms']:9.3f} {r['pair_p99_ms']:9.3f} "
                  f"{r['observe_mean_ms']:9.3f} {r['decide_p99_ms']:8.3f} {r['agent_pair_p50_ms']:8.3f} "
                  f"{r['agent_pair_mean_ms']:8.3f} {r['probe_cpu_ms']:7.1f}")
    decisions = summary["decisions"]
    print(f"served and full states made the same {decisions['typical_lookups_same']} lookups "
          f"on every τ² test session")
    for r in decisions["long_sessions"]:
        if r["differing"]:
            print(f"  {r['results']}-result session: the bound moved {r['differing']} of {r['full_lookups']} lookups "
                  f"(full state {r['full_lookups']}, served {r['served_lookups']}; first difference at lookup "
                  f"{r['first_difference']}), past: {'; '.join(r['bounds_passed'])}")
        else:
            past = f" (past: {'; '.join(r['bounds_passed'])})" if r["bounds_passed"] else ""
            print(f"  {r['results']}-result session: the same {r['full_lookups']} lookups{past}")
    write_summary(args.out, summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
