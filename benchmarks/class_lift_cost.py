"""What the class lift's counts cost learning: one app's train split learned with each way of counting them, side by side.

    python benchmarks/class_lift_cost.py [--sessions DIR] [--app tau2/retail] [--warm tau2/airline]
                                         [--modes full,thin,visited,off] [--rounds 5] [--json OUT]
    python benchmarks/class_lift_cost.py --sessions S/tau2 --modes full,off,bare,unbound,read   # the floors under learning

In one process (after learning `--warm` once, so imports and shared caches are settled), the app's
train sessions are learned round after round, once per mode, the result indexes emptied before
each learn. Prints the best round's sessions per CPU-second of each mode and its ratio to the first
mode's, and how many decisions each counted (their weight). The modes of `stretto learn
--class-lift` (`learn/bindings/lift_decisions.py`: `full` counts every decision, `off` none, the
others some), and three that bound what any way of counting the lift could save (issue 14's
ceiling; `--modes full,naming,once,off,bare`), whose flows are not flows to serve:

- `naming`: the lift's counting replaced by the part of it any way of counting the same classes
  must do: at each decision, the results of every pool holding a list path brought up to date
  with what the user named in them (`named_paths.named_table`; a path's class is whether the
  user named a candidate there), nothing counted;
- `once`: less than that: each such result named once, at the first decision it is in a pool (a
  result's naming only grows with the user's words: a lift that named each result once, at the
  last decision it is in a pool, and told each decision's classes from when each value was
  first written, would still name it once, with more of the user's words);
- `bare`: `off`, and no binding evidence (`sources.count_value` not called): the rest of learning
  (reading, indexing, provenance, intent, the reach, deriving);
- `unbound`: no bindings counted at all (`bindings.add_session` not called: no state, no indexing);
- `read`: nothing counted but the steps and contracts, nothing derived: reading each session,
  its fingerprint, its symbols (issue 30's 1,000 sessions per CPU-second is about this floor).

`off` is the ceiling of any lift, `naming` and `once` of any lift that counts the classes `full`
counts; they replace functions of `learn/bindings/evidence.py` (`unbound` and `read`: of
`flow/ir.py`) for the learn and put them back.
"""

from __future__ import annotations

import argparse
import json
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

import stretto_core.flow.ir as ir
import stretto_core.learn.bindings.evidence as evidence
from stretto_core.flow.stream import choose, learn_chosen
from stretto_core.learn.bindings.lift_classes import list_paths
from stretto_core.learn.bindings.lift_decisions import CLASS_LIFT_MODES, OFF
from stretto_core.learn.bindings.model import BindingOptions, NamedCounts
from stretto_core.learn.bindings.named_paths import named_table
from stretto_core.learn.bindings.pick import pool_of
from stretto_core.sessions.state import ToolState, clear_result_indexes

BOUNDS = ("naming", "once", "bare", "unbound", "read")
"""The modes that bound what counting the lift could save (module docstring)."""


def naming_only(counts: NamedCounts, state: ToolState, called: Iterable[str], weight: float = 1.0) -> None:
    """In place of `named.count_decision` (`naming`): every pool's results named as of now."""
    _name_pools(state, once=False)


def naming_once(counts: NamedCounts, state: ToolState, called: Iterable[str], weight: float = 1.0) -> None:
    """In place of `named.count_decision` (`once`): each result named the first time only."""
    _name_pools(state, once=True)


def _name_pools(state: ToolState, once: bool) -> None:
    for tool in state.ok_results:
        pool = pool_of(state, tool)
        if list_paths(pool):
            for entry in pool:
                if once:
                    if _ONCE in entry.cache:
                        continue
                    entry.cache[_ONCE] = True
                named_table(state, entry)


_ONCE = "class-lift-cost-once"


def nothing(*_args: Any, **_kwargs: Any) -> None:
    """In place of `sources.count_value` (`bare`)."""


@contextmanager
def counted_as(mode: str) -> Iterator[BindingOptions]:
    """The binding options a mode learns with, the evidence's functions replaced while it does."""
    kept = evidence.count_decision, evidence.count_value, ir.add_session, ir.count_intent
    if mode in ("naming", "once"):
        evidence.count_decision = naming_only if mode == "naming" else naming_once
    elif mode == "bare":
        evidence.count_value = nothing
    elif mode in ("unbound", "read"):
        ir.add_session = nothing
        if mode == "read":
            ir.count_intent = nothing
    try:
        yield BindingOptions(class_lift=OFF if mode == "bare" else "full" if mode in BOUNDS else mode)
    finally:
        evidence.count_decision, evidence.count_value, ir.add_session, ir.count_intent = kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, required=True, help="ingested sessions (stretto ingest ...)")
    parser.add_argument("--app", default="tau2/retail")
    parser.add_argument("--warm", default="tau2/airline")
    parser.add_argument("--modes", default="full,thin,visited,off")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    modes = args.modes.split(",")
    unknown = [m for m in modes if m not in CLASS_LIFT_MODES + BOUNDS]
    if unknown:
        raise SystemExit(f"--modes: {', '.join(unknown)} not among {', '.join(CLASS_LIFT_MODES + BOUNDS)}")
    learn_chosen(choose([str(args.sessions)], "train", apps=[args.warm]))
    chosen = choose([str(args.sessions)], "train", apps=[args.app])
    best = {mode: float("inf") for mode in modes}
    decisions: dict[str, float] = {}
    for _ in range(args.rounds):
        for mode in modes:
            with counted_as(mode) as options:
                clear_result_indexes()
                start = time.process_time()
                flow = learn_chosen(chosen, binding_options=options, derive=mode != "read")
                best[mode] = min(best[mode], time.process_time() - start)
            decisions[mode] = sum(flow.bindings.named.decisions.values())
    n = len(chosen.files)
    rates = {mode: n / seconds for mode, seconds in best.items()}
    print(f"{args.app} train, {n} sessions, best of {args.rounds} rounds, sessions per CPU-second:")
    for mode in modes:
        label = f"--class-lift {mode}" if mode in CLASS_LIFT_MODES else mode
        print(f"  {label:21s} {rates[mode]:5.0f}/s  ×{rates[mode] / rates[modes[0]]:.2f}  "
              f"(source-decisions counted, weighted: {decisions[mode]:.0f})")
    if args.json is not None:
        args.json.write_text(json.dumps({"app": args.app, "sessions": n, "rates": rates, "decisions": decisions},
                                        indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
