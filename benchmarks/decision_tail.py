"""What the slowest steps of serving do (issue 30, goal 4: observe + decide p99 ≤ 0.3 ms CPU).

Learns a flow per τ² domain from its train split, walks the test split's sessions through the
engine as `decision_latency.py` does (a warm-up walk, then `--rounds` walks, each step keeping
its quickest CPU time), and takes the steps over the `--quantile` (p98 by default). For those
steps only it says what kind of event they follow (the agent's result or a lookup's, a user
message since the last step, the first decision after the agent's result, the result's length)
beside the same for every step, and then walks once more with the profiler on for exactly those
steps, printing the functions their time goes to:

    python benchmarks/decision_tail.py [--domains retail airline] [--quantile 0.98] [--top 25]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from stretto_core.flow.ir import learn
from stretto_core.paths import data_root
from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions import state as state_module
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.model import LLMTurn, Session, ToolResult, UserMessage
from stretto_core.sessions.state import call_key
from stretto_core.sessions.store import load_sessions
from stretto_core.sessions.splits import split_of
from decision_latency import recorded_results


@dataclass
class Step:
    """One observe + decide step and what it followed."""

    seconds: float
    observe_seconds: float
    by_lookup: bool
    after_user: bool
    first_after_result: bool
    length: int
    decided: bool


Hook = Callable[[int, str], None]
"""Called with a step's index and `observe`, `decide` or `end` as each part of it starts."""


def walk(engine: Engine, session: Session, out: list[Step], hook: Hook | None = None) -> None:
    """Every step of one session, appended to `out`; `hook` is told as each part of a step starts."""
    es = engine.session(live_manifest=session.header.manifest)
    known = recorded_results(session)
    agent_calls = {c.call_id for e in session.events if isinstance(e, LLMTurn) for c in e.calls}
    clock = time.process_time
    user_since = False

    def step(observe: Callable[[], object], by_lookup: bool, first: bool, length: int) -> object:
        nonlocal user_since
        if hook is not None:
            hook(len(out), "observe")
        started = clock()
        observe()
        observed = clock()
        if hook is not None:
            hook(len(out), "decide")
        decision = es.decide()
        ended = clock()
        if hook is not None:
            hook(len(out), "end")
        out.append(Step(ended - started, observed - started, by_lookup, user_since, first, length,
                        decision is not None))
        user_since = False
        return decision

    for event in session.events:
        if isinstance(event, UserMessage):
            user_since = True
        if not (isinstance(event, ToolResult) and event.call_id in agent_calls):
            es.observe(event)
            continue
        decision = step(lambda: es.observe(event), False, True, len(event.content))
        while decision is not None:
            content, error = known.get(call_key(decision.tool, decision.arguments), ("{}", False))
            decision = step(lambda: es.add_lookup(decision, content, error, event.call_id), True, False,
                            len(content))


def describe(steps: list[Step], label: str) -> str:
    """A line of what kind of steps these are."""
    n = len(steps) or 1
    share = lambda f: 100.0 * sum(1 for s in steps if f(s)) / n  # noqa: E731
    return (f"{label:10} steps {len(steps):6d}  lookup's result {share(lambda s: s.by_lookup):5.1f}%  "
            f"user msg since last {share(lambda s: s.after_user):5.1f}%  decided {share(lambda s: s.decided):5.1f}%  "
            f"observe share {100 * sum(s.observe_seconds for s in steps) / max(1e-12, sum(s.seconds for s in steps)):5.1f}%  "
            f"result chars median {statistics.median([s.length for s in steps] or [0]):7.0f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", nargs="+", default=["retail", "airline"])
    parser.add_argument("--quantile", type=float, default=0.98)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--part", choices=["both", "observe", "decide"], default="both",
                        help="profile the tail steps' observe, their decision, or both")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ingest_files("tau2", [data_root() / "tau2" / "trajectories"], Path(tmp))
        sessions = load_sessions([Path(tmp)])
    clear = getattr(state_module, "clear_index_caches", lambda: None)
    for domain in args.domains:
        app = f"tau2/{domain}"
        train = [s for s in sessions if s.header.app == app and split_of(s.header) == "train"]
        test = [s for s in sessions if s.header.app == app and split_of(s.header) == "test"]
        engine = Engine(FlowRuntime(learn(train)), EngineConfig())
        for s in test:  # warm, as a serving process is
            walk(engine, s, [])
        rounds: list[list[Step]] = []
        for _ in range(args.rounds):
            clear()
            steps: list[Step] = []
            for s in test:
                walk(engine, s, steps)
            rounds.append(steps)
        steps = rounds[0]
        for i, s in enumerate(steps):
            s.seconds = min(r[i].seconds for r in rounds)
            s.observe_seconds = min(r[i].observe_seconds for r in rounds)
        ordered = sorted(s.seconds for s in steps)
        cut = ordered[int(args.quantile * len(ordered))]
        tail = {i for i, s in enumerate(steps) if s.seconds >= cut}
        print(f"== {domain}: {len(steps)} steps, p50 {1e3 * ordered[len(ordered) // 2]:.3f} ms, "
              f"p{100 * args.quantile:.0f} {1e3 * cut:.3f} ms, p99 {1e3 * ordered[int(0.99 * len(ordered))]:.3f} ms, "
              f"max {1e3 * ordered[-1]:.3f} ms (CPU)")
        print(describe(steps, "all"))
        print(describe([steps[i] for i in sorted(tail)], "tail"))
        profile = cProfile.Profile()

        def hook(index: int, part: str) -> None:
            if index not in tail:
                return
            profile.disable()
            if part != "end" and args.part in ("both", part):
                profile.enable()

        clear()
        again: list[Step] = []
        for s in test:
            walk(engine, s, again, hook)
        text = io.StringIO()
        stats = pstats.Stats(profile, stream=text)
        stats.sort_stats("cumulative").print_stats(args.top)
        stats.sort_stats("tottime").print_stats(args.top)
        print(text.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
