"""Where the proxy's CPU per call goes, stage by stage, with a flow making one lookup per call.

The load of `proxy_cpu.py --flow` (the toy flow in front of `shop_server.py`, a new order each
call), through this checkout's `stretto proxy`, started with each stage's functions wrapped to
count their own thread CPU time (a stage's time leaves out the stages it calls): the engine's
observe, decide and add_lookup; recording an event (encoding it and queueing it); the wire's JSON
parse and encode; the session's own work on a result (`LiveSession._take_result`, `_finish`,
`llm_turn`); reading a result's text; the turn inference; tracing's trigger; the listing check;
the collection between replies. What no stage holds is the event loop, the pipes' system calls
and the relay's own code. The wrappers cost a little each (a few µs a call in all), so the
proxy's CPU per call printed is a little above `proxy_cpu.py`'s.

    python benchmarks/proxy_stages.py [--calls 4000] [--loop default|asyncio|uvloop]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from proxy_throughput import LOOP_NAMES, toy_flow_file, use_loop
from side_by_side import HERE, load_note

STAGES = [
    ("stretto_core.serve.engine", "EngineSession.observe", "engine: observe"),
    ("stretto_core.serve.engine", "EngineSession.decide", "engine: decide"),
    ("stretto_core.serve.engine", "EngineSession.add_lookup", "engine: add_lookup"),
    ("stretto_core.sessions.recorder", "SessionRecorder.record", "recording: encode and queue an event"),
    ("stretto_core.serve.live", "LiveSession._take_result", "session: take a result in"),
    ("stretto_core.serve.live", "LiveSession._finish", "session: appendix, events, keys, spans"),
    ("stretto_core.serve.live", "LiveSession.llm_turn", "session: the inferred model turn"),
    ("stretto_core.serve.pauses", "Collector.between_requests", "collection between replies"),
    ("stretto_mcp.served", "Served.arrived", "turn inference: a call arrived"),
    ("stretto_mcp.listing", "Listing.refusal", "listing check before a lookup"),
    ("stretto_core.serve.telemetry", "trigger", "tracing: the call's trigger"),
    ("stretto_mcp.wire", "parse_line", "wire: JSON parse"),
    ("stretto_mcp.wire", "encode", "wire: JSON encode"),
    ("stretto_mcp.served", "result_as_text", "a result's text"),
]

BOOT = r"""
import atexit, importlib, json, os, runpy, sys, time
stages, out = json.loads(os.environ["STAGES"]), os.environ["STAGES_OUT"]
clock, stack, spent = time.thread_time, [], {}

def wrapped(real, label):
    def timed(*args, **kwargs):
        frame = [clock(), 0.0]
        stack.append(frame)
        try:
            return real(*args, **kwargs)
        finally:
            stack.pop()
            took = clock() - frame[0]
            row = spent.setdefault(label, [0.0, 0])
            row[0] += took - frame[1]
            row[1] += 1
            if stack:
                stack[-1][1] += took
    return timed

for module, name, label in stages:
    owner = importlib.import_module(module)
    *path, attr = name.split(".")
    for part in path:
        owner = getattr(owner, part)
    timed = wrapped(getattr(owner, attr), label)
    setattr(owner, attr, timed)
    if not path:  # a function other modules imported by name: theirs too
        for other in ("stretto_mcp.channels", "stretto_mcp.own", "stretto_mcp.served", "stretto_core.serve.live"):
            held = importlib.import_module(other)
            if hasattr(held, attr):
                setattr(held, attr, timed)
atexit.register(lambda: open(out, "w").write(json.dumps(spent)))
sys.argv = ["stretto_core", *sys.argv[1:]]
runpy.run_module("stretto_core", run_name="__main__")
"""


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--calls", type=int, default=4000)
    options.add_argument("--loop", choices=tuple(LOOP_NAMES), default="default")
    args = options.parse_args(argv)
    if args.calls < 1:
        raise SystemExit("proxy_stages: --calls must be at least 1")
    use_loop(args.loop)
    sys.path.insert(0, str(HERE / "tests" / "adapters"))
    from proxy_latency import RawClient, cpu_seconds

    with tempfile.TemporaryDirectory() as folder:
        flow = toy_flow_file(Path(folder))
        out = Path(folder) / "stages.json"
        env = {**os.environ, "STAGES": json.dumps(STAGES), "STAGES_OUT": str(out),
               "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE / "adapters")])}
        client = RawClient([sys.executable, "-c", BOOT, "proxy", "--flow", str(flow), "--store", folder,
                            "--per-session", str(10 * args.calls + 100), "--log-level", "ERROR", "--",
                            sys.executable, str(HERE / "benchmarks" / "shop_server.py")], env=env)
        client.request("tools/list", {})
        for n in range(50):  # warm up; the stages count these calls too
            client.request("tools/call", {"name": "get_order", "arguments": {"order_id": f"O{n}"}})
        started = cpu_seconds(client.process.pid)
        for n in range(args.calls):
            client.request("tools/call", {"name": "get_order", "arguments": {"order_id": f"O{1000 + n}"}})
        used = cpu_seconds(client.process.pid) - started
        client.close()
        spent = json.loads(out.read_text())
    calls = args.calls + 50
    per_call = 1e3 * used / args.calls
    staged = sum(seconds for seconds, _ in spent.values()) * 1e3 / calls
    where = "its default loop (uvloop where installed)" if args.loop == "default" else LOOP_NAMES[args.loop]
    print(f"stretto proxy on {where}, the toy flow, {args.calls} calls ({load_note()}): "
          f"{per_call:.3f} ms CPU per call, by stage (each stage's own time):")
    for label, (seconds, count) in sorted(spent.items(), key=lambda item: -item[1][0]):
        print(f"  {1e3 * seconds / calls:7.4f} ms  {count / calls:4.1f}×/call  {label}")
    print(f"  {per_call - staged:7.4f} ms           the loop, the pipes' system calls and the relay (no stage)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
