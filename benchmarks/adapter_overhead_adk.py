"""What StrettoPlugin adds to each tool call in Google ADK, beside ADK's own time per call.

One ADK session per run through the real `Runner`, a scripted model making one call per turn
on the toy shop of the adapter tests (`tests/adapters/adk_support.py`):

- bare: no plugin; ADK's own time per call is the run's time over its calls;
- no lookup: the plugin serving the shop flow on `refund` calls (the flow decides, makes nothing);
- one lookup: `get_order` calls; the calls after which the flow looked up exactly one
  `get_customer` are measured, the lookup tool's own time taken out and reported apart;
- no lookup, not recorded: as "no lookup" with `store=False`, to show the recorder's share.

All times are this process's CPU time (`time.process_time`), so other work on the machine does
not move them. The plugin's time is measured inside its callbacks (the call's model turn and its
result) and split into stretto_core's live session and the adapter's own translation; the
difference of whole runs against the bare one is printed too. Medians over `--repeat` runs.

    python benchmarks/adapter_overhead_adk.py [--calls 60] [--repeat 7] [--out bench-out/adapter_overhead_adk.json]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "adapters"))  # the adapter tests' toy shop and scripted model

from adk_support import CUSTOMERS, SHOP_READS, Shop, run_app, shop_agent, shop_flow, steps  # noqa: E402
from stretto_adk import StrettoPlugin  # noqa: E402
from summary_file import write_summary

CLOCK = time.process_time
"""CPU seconds of this process: what the plugin costs, unmoved by other processes on the machine."""

CORE = {"s": 0.0}


def _time_core() -> None:
    """Count the time spent in stretto_core's live session, to split the adapter's share off."""
    from stretto_core import LiveSession

    for name in ("llm_turn", "user"):
        original = getattr(LiveSession, name)

        def timed(self: Any, *a: Any, _original: Any = original, **k: Any) -> Any:
            t0 = CLOCK()
            try:
                return _original(self, *a, **k)
            finally:
                CORE["s"] += CLOCK() - t0

        setattr(LiveSession, name, timed)
    original_after = LiveSession.after_tool

    async def after_tool(self: Any, *a: Any, **k: Any) -> Any:
        t0 = CLOCK()
        try:
            return await original_after(self, *a, **k)
        finally:
            CORE["s"] += CLOCK() - t0

    LiveSession.after_tool = after_tool  # type: ignore[method-assign]


class Timed(StrettoPlugin):
    """The plugin, timing each call's callbacks: its model turn's and its result's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.turn: tuple[float, float] = (0.0, 0.0)
        self.calls: list[dict[str, float]] = []

    async def after_model_callback(self, **kwargs: Any) -> Any:
        core, t0 = CORE["s"], CLOCK()
        value = await super().after_model_callback(**kwargs)
        self.turn = (CLOCK() - t0, CORE["s"] - core)
        return value

    async def after_tool_callback(self, **kwargs: Any) -> Any:
        before = len(self.sessions.find(kwargs["tool_context"].session.id)[0].lookups) if len(self.sessions) else 0
        core, t0 = CORE["s"], CLOCK()
        value = await super().after_tool_callback(**kwargs)
        spent, in_core = CLOCK() - t0, CORE["s"] - core
        live = self.sessions.find(kwargs["tool_context"].session.id)[0]
        self.calls.append({"s": spent + self.turn[0], "core_s": in_core + self.turn[1],
                           "lookups": len(live.lookups) - before})
        return value


def script(tool: str, calls: int) -> list[Any]:
    return [[(tool, {"order_id": f"O{1 + i % 90}"})] for i in range(calls)] + ["done"]


def one_run(tool: str | None, calls: int, store: Path | bool) -> dict[str, float]:
    lookup_s: list[float] = []

    def customer(customer_id: str) -> Any:  # the lookup's own tool time, measured apart
        t0 = CLOCK()
        record = dict(CUSTOMERS[customer_id])
        lookup_s.append(CLOCK() - t0)
        return record

    shop = Shop(customer=customer)
    agent = shop_agent(shop, steps(*script(tool or "refund", calls)), keep_requests=False)
    plugins = [] if tool is None else [Timed(flow=shop_flow(), reads=SHOP_READS, writes=["refund"], store=store)]
    t0, w0 = CLOCK(), time.perf_counter()
    asyncio.run(run_app(agent, plugins, ["please refund my orders"], session_id=f"bench-{time.monotonic_ns()}"))
    out = {"cpu_per_call_ms": 1e3 * (CLOCK() - t0) / calls,
           "wall_per_call_ms": 1e3 * (time.perf_counter() - w0) / calls}
    if plugins:
        made = plugins[0].calls
        wanted = 0 if tool == "refund" else 1
        chosen = [c for c in made if c["lookups"] == wanted]
        tool_ms = 1e3 * sum(lookup_s) / max(1, sum(c["lookups"] for c in made))
        out.update({"calls_measured": len(chosen),
                    "stretto_per_call_ms": 1e3 * statistics.fmean(c["s"] for c in chosen) - wanted * tool_ms,
                    "core_per_call_ms": 1e3 * statistics.fmean(c["core_s"] for c in chosen) - wanted * tool_ms,
                    "lookup_tool_ms": wanted * tool_ms})
        out["adapter_per_call_ms"] = out["stretto_per_call_ms"] - out["core_per_call_ms"]
    return out


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60, help="tool calls per run (one ADK session)")
    parser.add_argument("--repeat", type=int, default=7, help="runs per case (medians are reported)")
    parser.add_argument("--out", default="bench-out/adapter_overhead_adk.json")
    args = parser.parse_args(argv)
    logging.getLogger("google_adk").setLevel(logging.ERROR)
    _time_core()
    cases = {"bare": (None, True), "no lookup": ("refund", True), "one lookup": ("get_order", True),
             "no lookup, not recorded": ("refund", False)}
    with tempfile.TemporaryDirectory() as tmp:
        one_run("get_order", 20, Path(tmp))  # warm imports and caches
        results = {name: median_of([one_run(tool, args.calls, Path(tmp) if recorded else False)
                                    for _ in range(args.repeat)])
                   for name, (tool, recorded) in cases.items()}
    adk = results["bare"]["cpu_per_call_ms"]
    for name in ("no lookup", "one lookup", "no lookup, not recorded"):
        r = results[name]
        r["cpu_added_per_call_ms"] = r["cpu_per_call_ms"] - adk
        r["stretto_share_of_adk_call"] = r["stretto_per_call_ms"] / adk
    summary = {"calls_per_run": args.calls, "repeat": args.repeat, "clock": "process CPU time",
               "adk_per_call_ms": adk, "adk_wall_per_call_ms": results["bare"]["wall_per_call_ms"],
               "goals": {"no_lookup_ms": 0.2, "one_lookup_beyond_tool_ms": 1.0},
               "cases": results, "python": sys.version.split()[0]}
    print(f"ADK's own time per call (bare run, CPU): {adk:.3f} ms (wall {summary['adk_wall_per_call_ms']:.3f} ms)")
    print(f"{'case':23} {'stretto ms':>10} {'of which core':>13} {'adapter':>8} {'x ADK call':>10} "
          f"{'lookup tool ms':>14} {'run +ms/call':>12}")
    for name in ("no lookup", "one lookup", "no lookup, not recorded"):
        r = results[name]
        print(f"{name:23} {r['stretto_per_call_ms']:10.3f} {r['core_per_call_ms']:13.3f} "
              f"{r['adapter_per_call_ms']:8.3f} "
              f"{r['stretto_share_of_adk_call']:10.2f} {r['lookup_tool_ms']:14.4f} {r['cpu_added_per_call_ms']:12.3f}")
    write_summary(args.out, summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
