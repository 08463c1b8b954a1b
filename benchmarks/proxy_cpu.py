"""The proxy's CPU per forwarded call, before → after, side by side (issue 30, goal 5).

Each checkout's `stretto proxy` (recording on, no flow: every call forwarded, recorded and
answered with no lookup) is started in front of the tests' toy MCP server, and a raw JSON-RPC
host (`proxy_latency.RawClient`) makes `--calls` `tools/call` requests through it; the proxy
process's own user + system CPU (from /proc) over those calls, per call. Both checkouts' proxies
run at the same time, round after round, so both see the same load.

`--flow`: the proxy serves the toy flow (after `get_order`, look up `get_customer`), learned by
this checkout, in front of `shop_server.py`, and each call asks for a new order, so every call
makes one lookup: the CPU per call is a forwarded, recorded call and its lookup, decided, made,
recorded and appended (`proxy_throughput.py` runs the same load for calls per second).

`--bare`: also, after the rounds, a bare line copier (`line_copy.py`) in front of the same server,
alone, as many times as there are rounds: the floor any stdio relay pays.

`--loop asyncio|uvloop`: both checkouts' proxies run on that event loop (`STRETTO_PROXY_LOOP`,
docs/proxy.md), and so does the line copier; by default each checkout runs on its own default
loop (uvloop where installed, from issue 30's goal 5 on) and the line copier on uvloop's where
installed too, so the floor is read on the loop the proxy uses.

    python benchmarks/proxy_cpu.py [--before HEAD~1] [--calls 2000] [--rounds 3] [--flow] [--bare]
                                   [--loop default|asyncio|uvloop] [--out bench-out/proxy_cpu.json]
"""

from __future__ import annotations

import tempfile

from pathlib import Path

from side_by_side import HERE, best, checkout, finish, load_note, parser, ratio_median, run_summary, side_by_side, start
from summary_file import write_summary
from proxy_throughput import LOOP_NAMES, toy_flow_file, use_loop

PROBE = r"""
import json, sys, tempfile
import proxy_latency  # this checkout's benchmarks folder is on the path; it adds the tests' helpers
from proxy_latency import RawClient, cpu_seconds
from proxy_support import toy_server_command
calls, flow, server, copier = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
store = tempfile.mkdtemp()
serving = ["--flow", flow, "--per-session", str(10 * calls + 100)] if flow else []
downstream = [sys.executable, server] if flow else toy_server_command()
client = RawClient([sys.executable, copier, *downstream] if copier else
                   [sys.executable, "-m", "stretto_core", "proxy", "--store", store, "--log-level", "ERROR",
                    *serving, "--", *downstream])
client.request("tools/list", {})
def params(n):  # with a flow, a new order each call: a new customer to look up
    return {"name": "get_order", "arguments": {"order_id": f"O{n}" if flow else "O1"}}
for n in range(50):  # warm up
    client.request("tools/call", params(n))
pid = client.process.pid
started = cpu_seconds(pid)
wall = sum(client.request("tools/call", params(1000 + n)) for n in range(calls))
used = cpu_seconds(pid) - started
client.close()
print(json.dumps({"calls": calls, "cpu_ms_per_call": 1e3 * used / calls, "wall_ms_per_call": 1e3 * wall / calls}))
"""


def copier_loop(loop: str) -> str:
    """The loop `line_copy.py` runs on: uvloop unless asyncio is asked for or uvloop is missing."""
    if loop == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def main(argv: list[str] | None = None) -> int:
    options = parser(__doc__, "bench-out/proxy_cpu.json", rounds=3)
    options.add_argument("--calls", type=int, default=2000)
    options.add_argument("--flow", action="store_true", help="serve the toy flow: one lookup per call")
    options.add_argument("--bare", action="store_true", help="also a bare line copier in front of the same server")
    options.add_argument("--loop", choices=("default", "asyncio", "uvloop"), default="default",
                         help="the proxies' event loop (STRETTO_PROXY_LOOP); default: each checkout's own")
    args = options.parse_args(argv)
    use_loop(args.loop)
    server = HERE / "benchmarks" / "shop_server.py"
    with tempfile.TemporaryDirectory() as folder, checkout(args.before) as before:
        load = load_note()
        flow = str(toy_flow_file(Path(folder))) if args.flow else ""
        rounds = side_by_side(PROBE, [args.calls, flow, server, ""], before, args.rounds)
        copier = HERE / "benchmarks" / "line_copy.py"
        bare = [finish(start(HERE, PROBE, [args.calls, flow, server, copier]), "line copy")
                for _ in range(args.rounds if args.bare else 0)]
    summary = run_summary(args.before, load, rounds, calls=args.calls, flow=bool(args.flow), loop=args.loop,
                          line_copy_cpu_ms_per_call=min(r["cpu_ms_per_call"] for r in bare) if bare else None,
                          before_cpu_ms_per_call=best(rounds, "before", "cpu_ms_per_call"),
                          after_cpu_ms_per_call=best(rounds, "after", "cpu_ms_per_call"),
                          ratio_median=ratio_median(rounds, "cpu_ms_per_call"))
    what = ("to shop_server.py with the toy flow (one lookup per call)" if args.flow
            else "to the toy server (recording on, no flow)")
    print(f"stretto proxy on {LOOP_NAMES[args.loop]}, {args.calls} tools/call {what}: the proxy's CPU per "
          f"call, best of {args.rounds} rounds run side by side ({load}):")
    print(f"  before ({summary['before']}): {summary['before_cpu_ms_per_call']:.3f} ms → "
          f"after: {summary['after_cpu_ms_per_call']:.3f} ms (×{summary['ratio_median']:.2f}, median round)")
    if bare:
        print(f"  a bare line copy (line_copy.py, on {copier_loop(args.loop)}'s loop) in front of the same server, "
              f"alone after the rounds, best of {len(bare)}: {summary['line_copy_cpu_ms_per_call']:.3f} ms")
    write_summary(args.out, summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
