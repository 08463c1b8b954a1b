"""Decision latency and learning throughput on τ²-bench (issue: learn a flow and speculate on it).

Learns one flow per τ² domain from every train-split session in STRETTO_DATA, then walks every
test-split session through the engine and times each decision after each tool response (each
call of `EngineSession.decide`, lookups included). Lookups get the result of the agent's own
later identical call when there is one, else a stand-in, as in replay from the record.

Prints p50/p99/max per decision and sessions learned per second, and writes JSON:

    python benchmarks/decision_latency.py [--out bench-out/decision_latency.json]
"""

from __future__ import annotations

import argparse
import json
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
from stretto_core.sessions.state import call_key
from stretto_core.sessions.store import load_sessions


def recorded_results(session: Session) -> dict[str, tuple[str, bool]]:
    """The first recorded result of each distinct agent call, by call key."""
    calls = {c.call_id: c for e in session.events if isinstance(e, LLMTurn) for c in e.calls}
    out: dict[str, tuple[str, bool]] = {}
    for e in session.events:
        if isinstance(e, ToolResult) and e.call_id in calls:
            c = calls[e.call_id]
            out.setdefault(call_key(c.tool, c.arguments), (e.content, e.error))
    return out


def walk(engine: Engine, session: Session) -> list[float]:
    """Every decision's seconds over one session."""
    es = engine.session()
    known = recorded_results(session)
    agent_calls = {c.call_id for e in session.events if isinstance(e, LLMTurn) for c in e.calls}

    def call_tool(tool: str, args: dict) -> tuple[str, bool]:
        return known.get(call_key(tool, args), ("{}", False))

    for event in session.events:
        es.observe(event)
        if isinstance(event, ToolResult) and event.call_id in agent_calls:
            es.run_lookups(event.call_id, call_tool)
    return es.decide_seconds


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench-out/decision_latency.json")
    parser.add_argument("--repeat", type=int, default=3, help="times each learn is repeated for throughput")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ingest_files("tau2", [data_root() / "tau2" / "trajectories"], Path(tmp))
        sessions = load_sessions([Path(tmp)])
    rows = []
    all_decisions: list[float] = []
    total_sessions, total_learn = 0, 0.0
    for domain in ("airline", "retail", "telecom"):
        app = f"tau2/{domain}"
        train = [s for s in sessions if s.header.app == app and split_of(s.header) == "train"]
        test = [s for s in sessions if s.header.app == app and split_of(s.header) == "test"]
        seconds = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            flow = learn(train)
            seconds.append(time.perf_counter() - started)
        learn_s = min(seconds)
        total_sessions += len(train)
        total_learn += learn_s
        engine = Engine(FlowRuntime(flow), EngineConfig())
        decisions = [d for s in test for d in walk(engine, s)]
        all_decisions += decisions
        rows.append({"domain": domain, "train_sessions": len(train), "test_sessions": len(test),
                     "learn_seconds": learn_s, "sessions_per_second": len(train) / learn_s,
                     "decisions": len(decisions), "p50_ms": 1e3 * percentile(decisions, 0.5),
                     "p99_ms": 1e3 * percentile(decisions, 0.99), "max_ms": 1e3 * max(decisions),
                     "mean_ms": 1e3 * statistics.fmean(decisions)})
    summary = {"decisions": len(all_decisions), "p50_ms": 1e3 * percentile(all_decisions, 0.5),
               "p99_ms": 1e3 * percentile(all_decisions, 0.99), "max_ms": 1e3 * max(all_decisions),
               "sessions_per_second": total_sessions / total_learn, "per_domain": rows,
               "python": sys.version.split()[0]}
    print(f"{'domain':8} {'train':>6} {'learn s/s':>10} {'decisions':>10} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for r in rows:
        print(f"{r['domain']:8} {r['train_sessions']:6d} {r['sessions_per_second']:10.0f} {r['decisions']:10d} "
              f"{r['p50_ms']:8.3f} {r['p99_ms']:8.3f} {r['max_ms']:8.3f}")
    print(f"{'all':8} {total_sessions:6d} {summary['sessions_per_second']:10.0f} {summary['decisions']:10d} "
          f"{summary['p50_ms']:8.3f} {summary['p99_ms']:8.3f} {summary['max_ms']:8.3f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
