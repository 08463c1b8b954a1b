"""Proxied calls per second with a flow making one lookup per call, before → after (issue 30, goal 5).

The toy flow (after `get_order`, look up `get_customer` by the order's customer), learned by
this checkout from the tests' toy sessions, is served by each checkout's `stretto proxy` in front
of `shop_server.py` (every order id is an order, so every call brings a new customer to look
up). `--hosts` raw JSON-RPC hosts (`proxy_latency.RawClient`, one thread each, one proxy and
one server each: a proxy serves one host connection) make `--calls` `tools/call` each, one after
another, as fast as their answers come. The goal is ≥ 5,000 calls per second on a 2-core box.

Printed per checkout (the round of most calls per second): calls per second of wall time, all
hosts together; the proxies' CPU per call (user + system from /proc, the lookup it made
included); the servers' CPU per call; the hosts' CPU per call; the lookups appended per call
(which must be 1: a run that makes none measures nothing); the least proxy CPU per call of any
round (the one the load disturbed least); and the ceiling the CPU alone sets, the box's cores
over all three processes' CPU per call. The hosts run in this probe's process, on the same two
cores. Throughput needs the whole machine, so the checkouts run one after the other,
alternating which goes first each round, never at the same time; the load is printed with them.

`--loop asyncio|uvloop`: both checkouts' proxies on that event loop (`STRETTO_PROXY_LOOP`); by
default each checkout runs on its own default loop.

    python benchmarks/proxy_throughput.py [--before HEAD~1] [--hosts 2] [--calls 2000] [--rounds 3]
                                          [--loop default|asyncio|uvloop] [--out bench-out/proxy_throughput.json]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from side_by_side import HERE, checkout, finish, load_note, parser, run_summary, start
from summary_file import write_summary

PROBE = r"""
import json, sys, tempfile, threading, time
import proxy_latency  # this checkout's benchmarks folder is on the path; it adds the tests' helpers
from proxy_latency import RawClient, cpu_seconds
flow, server, hosts, calls = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


def children(pid):
    try:
        return [int(p) for p in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except OSError:
        return []


def drive(client, first, count, appended):
    made = 0
    for n in range(first, first + count):
        client.counter += 1
        client._write({"jsonrpc": "2.0", "id": client.counter, "method": "tools/call",
                       "params": {"name": "get_order", "arguments": {"order_id": f"O{n}"}}})
        while True:
            answer = json.loads(client.process.stdout.readline())
            if answer.get("id") == client.counter:
                break
        made += len(answer["result"]["content"]) - 1
    appended.append(made)


clients = [RawClient([sys.executable, "-m", "stretto_core", "proxy", "--flow", flow, "--store", tempfile.mkdtemp(),
                      "--per-session", str(10 * calls + 100), "--log-level", "ERROR", "--",
                      sys.executable, server]) for _ in range(hosts)]
warm = []
for client in clients:  # the listing read and the first lookups made, before the clock starts
    client.request("tools/list", {})
    drive(client, 1, 20, warm)
proxies = [c.process.pid for c in clients]
servers = [kid for pid in proxies for kid in children(pid)]
cpu0 = [cpu_seconds(p) for p in proxies + servers]
appended = []
threads = [threading.Thread(target=drive, args=(c, 1000, calls, appended)) for c in clients]
host0 = time.process_time()
wall0 = time.perf_counter()
for t in threads:
    t.start()
for t in threads:
    t.join()
wall = time.perf_counter() - wall0
host = time.process_time() - host0
used = [cpu_seconds(p) - c0 for p, c0 in zip(proxies + servers, cpu0)]
for client in clients:
    client.close()
total = hosts * calls
print(json.dumps({"calls": total, "calls_per_second": total / wall,
                  "proxy_cpu_ms_per_call": 1e3 * sum(used[:hosts]) / total,
                  "server_cpu_ms_per_call": 1e3 * sum(used[hosts:]) / total if servers else None,
                  "host_cpu_ms_per_call": 1e3 * host / total,
                  "lookups_per_call": sum(appended) / total}))
"""


LOOP_NAMES = {"default": "each checkout's default loop", "asyncio": "asyncio's loop", "uvloop": "uvloop's loop"}


def use_loop(loop: str) -> None:
    """Every proxy this run starts on `loop`'s event loop (they inherit the environment); "default"
    leaves each checkout to its own choice (uvloop where installed from issue 30's goal 5 on)."""
    if loop == "default":
        os.environ.pop("STRETTO_PROXY_LOOP", None)
    else:
        os.environ["STRETTO_PROXY_LOOP"] = loop


def ceiling(row: dict) -> float | None:
    """Calls per second the box's cores could give if CPU were all that bounded them."""
    parts = [row.get("proxy_cpu_ms_per_call"), row.get("server_cpu_ms_per_call"), row.get("host_cpu_ms_per_call")]
    if any(part is None for part in parts) or not sum(parts):
        return None
    return 1e3 * (os.cpu_count() or 1) / sum(parts)


def toy_flow_file(folder: Path) -> Path:
    """The toy flow, learned and saved by this checkout (served by both)."""
    sys.path.insert(0, str(HERE / "tests" / "adapters"))
    from proxy_support import toy_flow

    return toy_flow(folder / "toy.flow.json")


def main(argv: list[str] | None = None) -> int:
    options = parser(__doc__, "bench-out/proxy_throughput.json", rounds=3)
    options.add_argument("--hosts", type=int, default=2, help="hosts at once, each with its own proxy")
    options.add_argument("--calls", type=int, default=2000, help="calls each host makes")
    options.add_argument("--loop", choices=("default", "asyncio", "uvloop"), default="default",
                         help="the proxies' event loop (STRETTO_PROXY_LOOP); default: each checkout's own")
    args = options.parse_args(argv)
    use_loop(args.loop)
    if args.hosts < 1 or args.calls < 1 or args.rounds < 1:
        raise SystemExit("proxy_throughput: --hosts, --calls and --rounds must be at least 1")
    server = str(HERE / "benchmarks" / "shop_server.py")
    with tempfile.TemporaryDirectory() as folder, checkout(args.before) as before:
        flow = toy_flow_file(Path(folder))
        load = load_note()
        rounds = []
        for number in range(args.rounds):
            order = [("before", before), ("after", HERE)]
            got = {}
            for who, code in order if number % 2 == 0 else order[::-1]:
                got[who] = finish(start(code, PROBE, [flow, server, args.hosts, args.calls]), who)
            rounds.append(got)
    best = {who: max((r[who] for r in rounds), key=lambda row: row["calls_per_second"]) for who in ("before", "after")}
    cpu = {who: min(r[who]["proxy_cpu_ms_per_call"] for r in rounds) for who in ("before", "after")}
    summary = run_summary(args.before, load, rounds, hosts=args.hosts, calls_per_host=args.calls, best=best,
                          proxy_cpu_ms_per_call_best=cpu, loop=args.loop,
                          cpu_ceiling_calls_per_second={who: ceiling(best[who]) for who in best})
    print(f"stretto proxy on {LOOP_NAMES[args.loop]} with the toy flow (one get_customer lookup per get_order call), {args.hosts} host(s) "
          f"at once, {args.calls} calls each, best of {args.rounds} rounds, checkouts alternating ({load}):")
    for who in ("before", "after"):
        row = best[who]
        name = f"before ({summary['before']})" if who == "before" else "after"
        print(f"  {name}: {row['calls_per_second']:,.0f} calls/s (wall); proxy CPU "
              f"{row['proxy_cpu_ms_per_call']:.3f} ms/call, server CPU {row['server_cpu_ms_per_call']:.3f} ms/call, "
              f"host CPU {row['host_cpu_ms_per_call']:.3f} ms/call; {row['lookups_per_call']:.2f} lookups appended "
              f"per call; least proxy CPU of any round {cpu[who]:.3f} ms/call; CPU ceiling "
              f"{summary['cpu_ceiling_calls_per_second'][who] or 0:,.0f} calls/s")
    for who in ("before", "after"):
        if best[who]["lookups_per_call"] < 0.99:
            print(f"proxy_throughput: the {who} proxy appended fewer than one lookup per call; the figure is not "
                  f"the one the goal asks for", file=sys.stderr)
            return 1
    write_summary(args.out, summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
