"""Decision latency and learning throughput on τ²-bench (issue: learn a flow and speculate on it).

Learns one flow per τ² domain from every train-split session in STRETTO_DATA, then walks every
test-split session through the engine (a served session) and times each step of Algorithm 1
after an agent's tool result: a result observed (`observe` of the agent's, `add_lookup` of a
lookup's: indexing it into the state) and the decision after it (`decide`), in CPU time; and
each call of `EngineSession.decide` on its own (wall time). Lookups get the result of the
agent's own later identical call when there is one, else a stand-in, as in replay from the record.

Prints p50/p99/max per decision and per observe + decide pair, and sessions learned per second,
and writes JSON. The test split is walked `--rounds` times (the same steps each time) and each
step keeps its quickest time, so that a machine shared with other jobs weighs less on the tail:

    python benchmarks/decision_latency.py [--out bench-out/decision_latency.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.flow.ir import learn
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.ingest import ingest_files
from stretto_core.paths import data_root
from stretto_core.sessions.model import LLMTurn, Session, ToolResult
from stretto_core.sessions.splits import split_of
from stretto_core.sessions import state as state_module
from stretto_core.sessions.state import call_key
from stretto_core.sessions.store import load_sessions
from summary_file import write_summary


def recorded_results(session: Session) -> dict[str, tuple[str, bool]]:
    """The first recorded result of each distinct agent call, by call key."""
    calls = {c.call_id: c for e in session.events if isinstance(e, LLMTurn) for c in e.calls}
    out: dict[str, tuple[str, bool]] = {}
    for e in session.events:
        if isinstance(e, ToolResult) and e.call_id in calls:
            c = calls[e.call_id]
            out.setdefault(call_key(c.tool, c.arguments), (e.content, e.error))
    return out


def walk(engine: Engine, session: Session, pairs: list[float] | None = None,
         observes: list[float] | None = None) -> list[float]:
    """Every decision's seconds over one session.

    Each step of Algorithm 1 after an agent's tool result (a result observed, the agent's or a
    lookup's, and the decision after it) adds its CPU seconds to `pairs`, and its observe alone
    to `observes`, when given.
    """
    es = engine.session(live_manifest=session.header.manifest)  # the authority on reads, as replay's
    known = recorded_results(session)
    agent_calls = {c.call_id for e in session.events if isinstance(e, LLMTurn) for c in e.calls}
    clock = time.process_time

    def step(observe) -> object:
        started = clock()
        observe()
        observed = clock()
        decision = es.decide()
        if pairs is not None:
            pairs.append(clock() - started)
        if observes is not None:
            observes.append(observed - started)
        return decision

    for event in session.events:
        if not (isinstance(event, ToolResult) and event.call_id in agent_calls):
            es.observe(event)
            continue
        decision = step(lambda: es.observe(event))
        while decision is not None:  # `run_lookups`, one step at a time
            content, error = known.get(call_key(decision.tool, decision.arguments), ("{}", False))
            decision = step(lambda: es.add_lookup(decision, content, error, event.call_id))
    return es.decide_seconds


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench-out/decision_latency.json")
    parser.add_argument("--repeat", type=int, default=3, help="times each learn is repeated for throughput")
    parser.add_argument("--rounds", type=int, default=3, help="walks of the test split; each step's quickest is kept")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ingest_files("tau2", [data_root() / "tau2" / "trajectories"], Path(tmp))
        sessions = load_sessions([Path(tmp)])
    rows = []
    all_decisions: list[float] = []
    all_pairs: list[float] = []
    all_observes: list[float] = []
    total_sessions, total_learn = 0, 0.0
    for domain in ("airline", "retail", "telecom"):
        app = f"tau2/{domain}"
        train = [s for s in sessions if s.header.app == app and split_of(s.header) == "train"]
        test = [s for s in sessions if s.header.app == app and split_of(s.header) == "test"]
        seconds = []
        for _ in range(args.repeat):
            if hasattr(state_module, "clear_index_caches"):
                state_module.clear_index_caches()  # each learn indexes its results afresh
            started = time.perf_counter()
            flow = learn(train)
            seconds.append(time.perf_counter() - started)
        learn_s = min(seconds)
        total_sessions += len(train)
        total_learn += learn_s
        engine = Engine(FlowRuntime(flow), EngineConfig())
        for s in test:  # warm the flow's caches (reach tables per context), as a serving process has
            walk(engine, s)
        rounds = []
        for _ in range(args.rounds):  # the same walk each round; each step keeps its quickest time
            clear = getattr(state_module, "clear_index_caches", None)
            if clear is not None:  # but no result is indexed already: each one's observe is timed whole
                clear()
            pairs_r: list[float] = []
            observes_r: list[float] = []
            rounds.append(([d for s in test for d in walk(engine, s, pairs_r, observes_r)], pairs_r, observes_r))
        decisions, pairs, observes = ([min(times) for times in zip(*(r[k] for r in rounds))] for k in range(3))
        all_decisions += decisions
        all_pairs += pairs
        all_observes += observes
        rows.append({"domain": domain, "train_sessions": len(train), "test_sessions": len(test),
                     "learn_seconds": learn_s, "sessions_per_second": len(train) / learn_s,
                     "decisions": len(decisions), "p50_ms": 1e3 * percentile(decisions, 0.5),
                     "p99_ms": 1e3 * percentile(decisions, 0.99), "max_ms": 1e3 * max(decisions),
                     "mean_ms": 1e3 * statistics.fmean(decisions),
                     "pairs": len(pairs), "pair_p50_ms": 1e3 * percentile(pairs, 0.5),
                     "pair_p99_ms": 1e3 * percentile(pairs, 0.99), "observe_p99_ms": 1e3 * percentile(observes, 0.99)})
    summary = {"decisions": len(all_decisions), "p50_ms": 1e3 * percentile(all_decisions, 0.5),
               "p99_ms": 1e3 * percentile(all_decisions, 0.99), "max_ms": 1e3 * max(all_decisions),
               "pair_p50_ms": 1e3 * percentile(all_pairs, 0.5), "pair_p99_ms": 1e3 * percentile(all_pairs, 0.99),
               "observe_p99_ms": 1e3 * percentile(all_observes, 0.99),
               "sessions_per_second": total_sessions / total_learn, "per_domain": rows,
               "python": sys.version.split()[0]}
    print(f"{'domain':8} {'train':>6} {'learn s/s':>10} {'decisions':>10} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}"
          f" {'pair p50':>9} {'pair p99':>9} {'obs p99':>8}")
    for r in rows:
        print(f"{r['domain']:8} {r['train_sessions']:6d} {r['sessions_per_second']:10.0f} {r['decisions']:10d} "
              f"{r['p50_ms']:8.3f} {r['p99_ms']:8.3f} {r['max_ms']:8.3f} {r['pair_p50_ms']:9.3f} "
              f"{r['pair_p99_ms']:9.3f} {r['observe_p99_ms']:8.3f}")
    print(f"{'all':8} {total_sessions:6d} {summary['sessions_per_second']:10.0f} {summary['decisions']:10d} "
          f"{summary['p50_ms']:8.3f} {summary['p99_ms']:8.3f} {summary['max_ms']:8.3f} {summary['pair_p50_ms']:9.3f} "
          f"{summary['pair_p99_ms']:9.3f} {summary['observe_p99_ms']:8.3f}")
    print("(a pair: one tool result observed, the agent's or a lookup's, and the decision after it; CPU time)")
    write_summary(args.out, summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
