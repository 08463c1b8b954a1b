"""Decision latency and learning throughput on τ²-bench (issue: learn a flow and speculate on it).

Learns one flow per τ² domain from every train-split session in STRETTO_DATA, then walks every
test-split session through the engine (a served session) and times each step of Algorithm 1
after an agent's tool result: a result observed (`observe` of the agent's, `add_lookup` of a
lookup's: indexing it into the state) and the decision after it (`decide`), in CPU time; and
each call of `EngineSession.decide` on its own (wall time). Lookups get the result of the
agent's own later identical call when there is one, else a stand-in, as in replay from the record.

Prints p50/p99/max per decision and per observe + decide pair, and sessions learned per second,
and writes JSON. The test split is walked `--rounds` times (the same steps each time) and each
step keeps its quickest time, so that a machine shared with other jobs weighs less on the tail.
Each domain's lookups (every decision's tool and arguments, in order) are counted and hashed,
so two runs show whether they made the same ones:

    python benchmarks/decision_latency.py [--out bench-out/decision_latency.json]

With `--before REV` it runs under REV's code and this checkout's side by side (`side_by_side.py`:
both started together each round, the same load on both) and prints before → after, and whether
the lookups were the same:

    python benchmarks/decision_latency.py --before main --compare-rounds 3 [--name-on-message]
"""

from __future__ import annotations

import argparse
import hashlib
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
from stretto_core.sessions.model import LLMTurn, Session, ToolResult, UserMessage
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
         observes: list[float] | None = None, made: list[str] | None = None,
         users: list[float] | None = None) -> list[float]:
    """Every decision's seconds over one session.

    Each step of Algorithm 1 after an agent's tool result (a result observed, the agent's or a
    lookup's, and the decision after it) adds its CPU seconds to `pairs`, and its observe alone
    to `observes`, when given; each lookup made goes to `made` as its call key, and each user
    message's observe (off a tool call's path: the agent thinks after it) to `users`.
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
        if made is not None and decision is not None:
            made.append(call_key(decision.tool, decision.arguments))
        return decision

    for event in session.events:
        if not (isinstance(event, ToolResult) and event.call_id in agent_calls):
            if users is not None and isinstance(event, UserMessage):
                started = clock()
                es.observe(event)
                users.append(clock() - started)
                continue
            es.observe(event)
            continue
        decision = step(lambda: es.observe(event))
        while decision is not None:  # `run_lookups`, one step at a time
            content, error = known.get(call_key(decision.tool, decision.arguments), ("{}", False))
            decision = step(lambda: es.add_lookup(decision, content, error, event.call_id))
    return es.decide_seconds


def config(name_on_message: bool) -> EngineConfig:
    """The served config; `name_on_message` where this code has it (a checkout before it has not)."""
    known = getattr(EngineConfig, "__dataclass_fields__", {})
    return EngineConfig(name_on_message=True) if name_on_message and "name_on_message" in known else EngineConfig()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench-out/decision_latency.json")
    parser.add_argument("--repeat", type=int, default=3, help="times each learn is repeated for throughput")
    parser.add_argument("--rounds", type=int, default=3, help="walks of the test split; each step's quickest is kept")
    parser.add_argument("--before", default=None, help="a commit (or checkout folder) to run side by side with")
    parser.add_argument("--compare-rounds", type=int, default=3, help="with --before: side-by-side rounds")
    parser.add_argument("--name-on-message", action="store_true",
                        help="serve with EngineConfig(name_on_message=True) where the code has it")
    args = parser.parse_args(argv)
    if args.before is not None:
        return compare(args)
    with tempfile.TemporaryDirectory() as tmp:
        ingest_files("tau2", [data_root() / "tau2" / "trajectories"], Path(tmp))
        sessions = load_sessions([Path(tmp)])
    rows = []
    all_decisions: list[float] = []
    all_pairs: list[float] = []
    all_observes: list[float] = []
    all_users: list[float] = []
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
        engine = Engine(FlowRuntime(flow), config(args.name_on_message))
        made: list[str] = []
        for s in test:  # warm the flow's caches (reach tables per context), as a serving process has
            walk(engine, s, made=made)
        rounds = []
        for _ in range(args.rounds):  # the same walk each round; each step keeps its quickest time
            clear = getattr(state_module, "clear_index_caches", None)
            if clear is not None:  # but no result is indexed already: each one's observe is timed whole
                clear()
            pairs_r: list[float] = []
            observes_r: list[float] = []
            users_r: list[float] = []
            rounds.append(([d for s in test for d in walk(engine, s, pairs_r, observes_r, users=users_r)], pairs_r,
                           observes_r, users_r))
        decisions, pairs, observes, users = ([min(times) for times in zip(*(r[k] for r in rounds))] for k in range(4))
        all_users += users
        all_decisions += decisions
        all_pairs += pairs
        all_observes += observes
        rows.append({"domain": domain, "train_sessions": len(train), "test_sessions": len(test),
                     "learn_seconds": learn_s, "sessions_per_second": len(train) / learn_s,
                     "decisions": len(decisions), "p50_ms": 1e3 * percentile(decisions, 0.5),
                     "p99_ms": 1e3 * percentile(decisions, 0.99), "max_ms": 1e3 * max(decisions),
                     "mean_ms": 1e3 * statistics.fmean(decisions),
                     "pairs": len(pairs), "pair_p50_ms": 1e3 * percentile(pairs, 0.5),
                     "pair_p99_ms": 1e3 * percentile(pairs, 0.99), "observe_p99_ms": 1e3 * percentile(observes, 0.99),
                     "lookups": len(made), "lookups_sha1": hashlib.sha1("\n".join(made).encode()).hexdigest()})
    summary = {"decisions": len(all_decisions), "p50_ms": 1e3 * percentile(all_decisions, 0.5),
               "p99_ms": 1e3 * percentile(all_decisions, 0.99), "max_ms": 1e3 * max(all_decisions),
               "pair_p50_ms": 1e3 * percentile(all_pairs, 0.5), "pair_p99_ms": 1e3 * percentile(all_pairs, 0.99),
               "observe_p99_ms": 1e3 * percentile(all_observes, 0.99),
               "user_messages": len(all_users), "user_observe_p50_ms": 1e3 * percentile(all_users, 0.5),
               "user_observe_p99_ms": 1e3 * percentile(all_users, 0.99), "user_observe_ms_total": 1e3 * sum(all_users),
               "pairs_ms_total": 1e3 * sum(all_pairs),
               "lookups": sum(r["lookups"] for r in rows),
               "lookups_sha1": hashlib.sha1(" ".join(r["lookups_sha1"] for r in rows).encode()).hexdigest(),
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


PROBE = r"""
import json, sys
from decision_latency import main
main(["--out", sys.argv[1], "--repeat", "1", "--rounds", sys.argv[2], *sys.argv[3:]])
print(json.dumps(json.load(open(sys.argv[1]))))
"""
"""This benchmark run by a checkout's code (its own stretto, this benchmark's walk), one JSON line."""


def compare(args: argparse.Namespace) -> int:
    """Before → after side by side: p50/p99 of decisions and of observe + decide, best round each."""
    from side_by_side import best, checkout, describe, load_note, run_summary, side_by_side

    out = Path(args.out)
    with checkout(args.before) as before:
        load = load_note()
        extra = ["--name-on-message"] if args.name_on_message else []
        rounds = side_by_side(PROBE, [str(out.with_name(out.stem + "-{who}.json")), args.rounds, *extra], before,
                              args.compare_rounds)
    keys = ("p50_ms", "p99_ms", "pair_p50_ms", "pair_p99_ms", "observe_p99_ms", "user_observe_p50_ms",
            "user_observe_p99_ms", "user_observe_ms_total", "pairs_ms_total")
    same = {r[w]["lookups_sha1"] for r in rounds for w in ("before", "after")}
    summary = run_summary(args.before, load, rounds, load_at_end=load_note(), same_lookups=len(same) == 1,
                          name_on_message=args.name_on_message,
                          lookups={w: rounds[0][w]["lookups"] for w in ("before", "after")},
                          **{f"{w}_{k}_best": best(rounds, w, k) for w in ("before", "after") for k in keys})
    print(f"τ² test split, observe + decide CPU ms, best of {args.compare_rounds} rounds side by side "
          f"({load}; at the end {summary['load_at_end']}); before: {describe(args.before)}")
    for w in ("before", "after"):
        print(f"  {w:6} decide p50 {summary[f'{w}_p50_ms_best']:.3f} p99 {summary[f'{w}_p99_ms_best']:.3f}; "
              f"pair p50 {summary[f'{w}_pair_p50_ms_best']:.3f} p99 {summary[f'{w}_pair_p99_ms_best']:.3f}; "
              f"observe p99 {summary[f'{w}_observe_p99_ms_best']:.3f}; lookups {summary['lookups'][w]}")
        print(f"         a user message observed: p50 {summary[f'{w}_user_observe_p50_ms_best']:.3f} "
              f"p99 {summary[f'{w}_user_observe_p99_ms_best']:.3f}; CPU ms in all pairs "
              f"{summary[f'{w}_pairs_ms_total_best']:.0f} + all user messages {summary[f'{w}_user_observe_ms_total_best']:.0f}")
    for domain_at, domain in enumerate(r["domain"] for r in rounds[0]["after"]["per_domain"]):
        line = "; ".join(
            f"{w} pair p99 {min(r[w]['per_domain'][domain_at]['pair_p99_ms'] for r in rounds):.3f}"
            for w in ("before", "after"))
        print(f"  {domain:8} {line} (best round)")
    print(f"  the same lookups before and after: {summary['same_lookups']}")
    write_summary(args.out, summary)
    return 0 if summary["same_lookups"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
