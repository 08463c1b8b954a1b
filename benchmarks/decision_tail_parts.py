"""Where the slowest steps' CPU goes, by the naming and indexing functions (issue 30, goal 4).

`decision_tail.py` profiles the slowest steps (over `--quantile`, p98 by default) with cProfile,
which inflates the many small calls of naming. This walks the same steps (a warm-up walk, then
`--rounds` walks, each step keeping its quickest CPU time) and then once more with a CPU clock
around each of a few functions, counted only inside those steps (inclusive time: a function's
callees are in its figure), and counts how much of each result those steps named was written by
the user (values, record words, tokens): what a lazy, per-said-word naming could skip.

    python benchmarks/decision_tail_parts.py [--domains retail airline] [--quantile 0.98]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from decision_tail import Step, walk

import stretto_core.learn.bindings.mention as mention
import stretto_core.learn.bindings.pick as pick
import stretto_core.learn.bindings.tokens as tokens
import stretto_core.sessions.focus as focus
import stretto_core.sessions.shared_indexes as shared_indexes
from stretto_core.flow.ir import learn
from stretto_core.paths import data_root
from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions import state as state_module
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.splits import split_of
from stretto_core.sessions.store import load_sessions

TIMED = [(pick, "named_view"), (mention, "_named_keys"), (mention, "element_hits"), (mention, "_said"),
         (mention, "_word_elements"), (mention, "tokens_said"), (mention, "token_elements"), (mention, "_latest"),
         (tokens, "entry_tokens"), (shared_indexes, "index_focused"), (focus, "split_leaves")]
"""(module, name): each is looked up by its callers in that module's globals, so it is wrapped there."""


class Clocks:
    """CPU seconds per wrapped function while `on` (the step is one of the slowest)."""

    def __init__(self) -> None:
        self.on = False
        self.seconds: dict[str, float] = {}
        self._undo: list[tuple[Any, str, Callable[..., Any]]] = []

    def wrap(self, module: Any, name: str) -> None:
        inner = getattr(module, name)
        clock, seconds = time.process_time, self.seconds

        def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.on:
                return inner(*args, **kwargs)
            started = clock()
            try:
                return inner(*args, **kwargs)
            finally:
                seconds[name] = seconds.get(name, 0.0) + clock() - started

        self._undo.append((module, name, inner))
        setattr(module, name, timed)

    def undo(self) -> None:
        for module, name, inner in reversed(self._undo):
            setattr(module, name, inner)
        self._undo.clear()


def named_share(clocks: Clocks, counts: dict[str, int]) -> Callable[[], None]:
    """Count, for each result first named inside a slow step, its values and how many the user wrote."""
    seen: set[int] = set()
    inner = mention._said

    def counted(state: Any, entry: Any) -> Any:
        got = inner(state, entry)
        if clocks.on and id(entry) not in seen:
            seen.add(id(entry))
            counts["results"] += 1
            counts["values"] += len(mention._writable_keys(entry))
            counts["values written"] += len(got[1])
            counts["tokens"] += len(tokens.entry_tokens(entry))
            counts["tokens written"] += len(tokens.tokens_said(state, entry)) if state.user.count else 0
        return got

    mention._said = counted  # type: ignore[assignment]

    def undo() -> None:
        mention._said = inner  # type: ignore[assignment]
    return undo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", nargs="+", default=["retail", "airline"])
    parser.add_argument("--quantile", type=float, default=0.98)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ingest_files("tau2", [data_root() / "tau2" / "trajectories"], Path(tmp))
        sessions = load_sessions([Path(tmp)])
    for domain in args.domains:
        app = f"tau2/{domain}"
        train = [s for s in sessions if s.header.app == app and split_of(s.header) == "train"]
        test = [s for s in sessions if s.header.app == app and split_of(s.header) == "test"]
        engine = Engine(FlowRuntime(learn(train)), EngineConfig())
        for s in test:
            walk(engine, s, [])
        rounds: list[list[Step]] = []
        for _ in range(args.rounds):
            state_module.clear_index_caches()
            steps: list[Step] = []
            for s in test:
                walk(engine, s, steps)
            rounds.append(steps)
        quickest = [min(r[i].seconds for r in rounds) for i in range(len(rounds[0]))]
        cut = sorted(quickest)[int(args.quantile * len(quickest))]
        tail = {i for i, seconds in enumerate(quickest) if seconds >= cut}
        clocks = Clocks()
        for module, name in TIMED:
            clocks.wrap(module, name)
        counts = dict.fromkeys(("results", "values", "values written", "tokens", "tokens written"), 0)
        undo_counts = named_share(clocks, counts)

        def hook(index: int, part: str) -> None:
            clocks.on = index in tail and part != "end"

        state_module.clear_index_caches()
        again: list[Step] = []
        try:
            for s in test:
                walk(engine, s, again, hook)
        finally:
            undo_counts()
            clocks.undo()
        total = sum(again[i].seconds for i in tail) or 1e-12
        print(f"== {domain}: the {len(tail)} steps at or over p{100 * args.quantile:.0f} ({1e3 * cut:.3f} ms), "
              f"{1e3 * total:.2f} ms CPU in all with the clocks on (inclusive time per function)")
        for name, seconds in sorted(clocks.seconds.items(), key=lambda kv: -kv[1]):
            print(f"  {name:16} {1e3 * seconds:7.2f} ms {100 * seconds / total:5.1f}%")
        print(f"  results first named in these steps: {counts['results']}; their values {counts['values']}, "
              f"written by the user {counts['values written']}; tokens {counts['tokens']}, written {counts['tokens written']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
