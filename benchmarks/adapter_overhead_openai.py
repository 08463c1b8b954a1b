"""What stretto adds to each tool call of an OpenAI Agents SDK run, beside what the SDK itself takes.

    .venv/bin/python benchmarks/adapter_overhead_openai.py [--turns 30] [--repeats 15] [--json overhead.json]

One run is `--turns` model turns, each calling one tool of the toy shop, with the SDK's own
`ScriptedModel`. The same run is timed bare, instrumented with a flow that decides nothing after
the calls made (recording only: hooks, wrapper, engine, session file), and instrumented with a
flow that makes one lookup after every call. Runs are interleaved and the median taken.

    SDK per call      = bare run / turns                      (the SDK's own machinery)
    added, no lookup  = (instrumented - bare) / turns         goal < 0.2 ms
    added, one lookup = (instrumented - bare) / turns - the looked-up tool's own time   goal < 1 ms

The end-to-end difference is noisy on a busy machine, so stretto's own work per call is also
timed directly: the hook that records the model turn and the wrapped invoker, called in a
loop outside any run (minus the tool's own time), with the session recorded and not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "adapters"))

import agents  # noqa: E402
from agents import Runner, set_tracing_disabled  # noqa: E402
from agents.testing import assistant_message, function_call  # noqa: E402
from agents.tool_context import ToolContext  # noqa: E402
from openai_support import READS, WRITES, Shop, scripted_agent, shop_flow  # noqa: E402

from stretto_openai_agents import instrument, runtime_of  # noqa: E402


def steps(tool: str, turns: int) -> list[Any]:
    out: list[Any] = []
    for n in range(turns):
        args = {"order_id": f"O{n + 10}"} if tool == "get_order" else {"customer_id": f"C{n + 10}"}
        out.append([function_call(tool, args, call_id=f"call-{n}")])
    return out + [[assistant_message("Done.")]]


def timed_run(tool: str, turns: int, flow: Any, store: str) -> tuple[float, int]:
    """Seconds of one run (agent built outside the timing), and the lookups it made."""
    shop = Shop()
    agent, _ = scripted_agent(shop.tools(), steps(tool, turns))
    if flow is not None:
        agent = instrument(agent, flow=flow, reads=READS, writes=WRITES, store=store, per_session=turns + 1)
    started = time.perf_counter()
    asyncio.run(Runner.run(agent, "Please look at my orders.", max_turns=turns + 2))
    seconds = time.perf_counter() - started
    runtime = runtime_of(agent)
    made = sum(len(s.lookups) for s in runtime.sessions) if runtime is not None else 0
    if runtime is not None:
        runtime.close()
    return seconds, made


def tool_time(repeats: int = 2000) -> float:
    """The looked-up tool's own time per call: its invoker, called directly."""
    tool = Shop().tools()[1]
    ctx = ToolContext(context=None, tool_name="get_customer", tool_call_id="x", tool_arguments='{"customer_id": "C1"}')

    async def calls() -> float:
        started = time.perf_counter()
        for _ in range(repeats):
            await tool.on_invoke_tool(ctx, '{"customer_id": "C1"}')
        return (time.perf_counter() - started) / repeats

    return asyncio.run(calls())


def direct(tool: str, calls: int, flow: Any, store: Any) -> tuple[float, int]:
    """stretto's own seconds per call (model-turn hook + wrapped invoker - the tool itself)."""
    from agents.items import ModelResponse
    from agents.usage import Usage

    shop = Shop()
    agent, _ = scripted_agent(shop.tools(), [])
    agent = instrument(agent, flow=flow, reads=READS, writes=WRITES, store=store, per_session=calls + 1)
    runtime = runtime_of(agent)
    wrapped = next(t for t in agent.tools if t.name == tool)
    original = wrapped.on_invoke_tool.__stretto_original__
    usage = Usage()
    key = "order_id" if tool == "get_order" else "customer_id"

    async def loop() -> float:
        spent = 0.0
        run = ToolContext(context=None, usage=usage, tool_name=tool, tool_call_id="-", tool_arguments="{}")
        runtime.model_asked(run, agent, [{"role": "user", "content": "Please look at my orders."}])
        for n in range(calls):
            args = json.dumps({key: f"{key[0].upper()}{n + 10}"})
            call = function_call(tool, args, call_id=f"call-{n}")
            response = ModelResponse(output=[call], usage=Usage(requests=1, input_tokens=100, output_tokens=9),
                                     response_id=None)
            ctx = ToolContext(context=None, usage=usage, tool_name=tool, tool_call_id=f"call-{n}",
                              tool_arguments=args, tool_call=call, agent=agent)
            started = time.perf_counter()
            runtime.model_answered(run, agent, response)
            await wrapped.on_invoke_tool(ctx, args)
            middle = time.perf_counter()
            await original(ctx, args)
            spent += (middle - started) - (time.perf_counter() - middle)
        return spent / calls

    seconds = asyncio.run(loop())
    made = sum(len(s.lookups) for s in runtime.sessions)
    runtime.close()
    return seconds, made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", type=Path, default=Path("adapter_overhead_openai.json"))
    args = parser.parse_args(argv)
    set_tracing_disabled(True)
    flow = shop_flow()
    times: dict[str, list[float]] = {"bare": [], "no_lookup": [], "bare_order": [], "one_lookup": []}
    lookups = {"no_lookup": 0, "one_lookup": 0}
    with tempfile.TemporaryDirectory(prefix="stretto-overhead-") as store:
        for tool, kind in (("get_customer", "no_lookup"), ("get_order", "one_lookup")):
            timed_run(tool, args.turns, None, store)
            timed_run(tool, args.turns, flow, store)  # warm both paths
        for _ in range(args.repeats):
            times["bare"].append(timed_run("get_customer", args.turns, None, store)[0])
            seconds, made = timed_run("get_customer", args.turns, flow, store)
            times["no_lookup"].append(seconds)
            lookups["no_lookup"] = made
            times["bare_order"].append(timed_run("get_order", args.turns, None, store)[0])
            seconds, made = timed_run("get_order", args.turns, flow, store)
            times["one_lookup"].append(seconds)
            lookups["one_lookup"] = made
    per_call = {k: statistics.median(v) / args.turns for k, v in times.items()}
    own = tool_time()
    sdk = (per_call["bare"] + per_call["bare_order"]) / 2
    added_none = per_call["no_lookup"] - per_call["bare"]
    added_one = per_call["one_lookup"] - per_call["bare_order"] - own
    ms = 1000.0
    with tempfile.TemporaryDirectory(prefix="stretto-overhead-") as store:
        direct("get_customer", 200, flow, store)
        own_none = statistics.median(direct("get_customer", 200, flow, store)[0] for _ in range(5))
        own_unrecorded = statistics.median(direct("get_customer", 200, flow, False)[0] for _ in range(5))
        own_one = [direct("get_order", 30, flow, store) for _ in range(15)]
        own_one_s = statistics.median(s for s, _ in own_one) - own
        own_one_made = own_one[0][1]
    print(f"openai-agents {agents.__version__}: {args.turns} tool calls per run, median of {args.repeats} runs")
    print(f"  SDK's own time per call:              {sdk * ms:.3f} ms")
    print(f"  stretto adds, no lookup:              {added_none * ms:.3f} ms  ({added_none / sdk:.1%} of the SDK's)"
          f"  goal < 0.2 ms  [{lookups['no_lookup']} lookups made]")
    print(f"  stretto adds, one lookup (minus the   {added_one * ms:.3f} ms  ({added_one / sdk:.1%} of the SDK's)"
          f"  goal < 1 ms    [{lookups['one_lookup']} lookups made]")
    print(f"    looked-up tool's own {own * ms:.4f} ms)")
    print("  stretto's own work per call, timed directly:")
    print(f"    no lookup:                          {own_none * ms:.3f} ms  ({own_none / sdk:.1%} of the SDK's)")
    print(f"    no lookup, nothing recorded:        {own_unrecorded * ms:.3f} ms")
    print(f"    one lookup (minus the tool's own):  {own_one_s * ms:.3f} ms  ({own_one_s / sdk:.1%} of the SDK's)"
          f"  [{own_one_made} lookups in 30 calls]")
    report = {"benchmark": "adapter_overhead_openai", "sdk": f"openai-agents {agents.__version__}",
              "turns": args.turns, "repeats": args.repeats,
              "sdk_ms_per_call": round(sdk * ms, 4),
              "added_ms_no_lookup": round(added_none * ms, 4), "ratio_no_lookup": round(added_none / sdk, 4),
              "added_ms_one_lookup": round(added_one * ms, 4), "ratio_one_lookup": round(added_one / sdk, 4),
              "lookup_tool_own_ms": round(own * ms, 4), "lookups": lookups,
              "direct_ms_no_lookup": round(own_none * ms, 4), "direct_ms_no_lookup_unrecorded": round(own_unrecorded * ms, 4),
              "direct_ms_one_lookup": round(own_one_s * ms, 4),
              "goals_ms": {"no_lookup": 0.2, "one_lookup": 1.0},
              "median_run_seconds": {k: round(statistics.median(v), 5) for k, v in times.items()}}
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(f"  wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
