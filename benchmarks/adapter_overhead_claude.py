"""What the Claude adapter's PostToolUse hook adds to each tool call, next to what the SDK itself takes.

One run of the real bundled CLI against the scripted Messages API, with the toy shop's in-process
MCP tools: the model alternates a call after which the flow decides nothing (`get_customer`) and
one after which it makes one lookup (`get_order` -> `get_customer`). Measured in that same run:

- the hook's own time per call (timed around the callback, recording included), without and with
  a lookup, and of the latter the lookup's tool time (the in-process server's call, through its
  in-memory MCP client) and the rest;
- the SDK's own time per tool call: from the PreToolUse hook's answer to the PostToolUse hook's
  arrival (the CLI calling the in-process tool through the SDK's bridge and back), and the wall
  time per model turn (request to request at the scripted API).

Then the hook is called directly many times (no CLI) for steadier medians. Prints and writes JSON:

    python benchmarks/adapter_overhead_claude.py [--pairs 20] [--direct 2000] [--out bench-out/adapter_overhead_claude.json]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "adapters"))

from claude_shop import Shop, customer_json, flow_then, order_json, shop_server  # noqa: E402
from claude_support import cli_options, run_client  # noqa: E402
from stretto_claude import claude_hooks  # noqa: E402
from stretto_claude.testing import Reply, ScriptedMessagesAPI, scripted  # noqa: E402


def ms(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    return {"n": len(values), "p50_ms": round(statistics.median(ordered) * 1e3, 4),
            "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))] * 1e3, 4),
            "mean_ms": round(statistics.fmean(ordered) * 1e3, 4)}


class Timed:
    """The hooks with timers around the PostToolUse callback and the lookups' tool calls."""

    def __init__(self, hooks: Any) -> None:
        self.hooks = hooks
        self.hook_times: list[tuple[str, float, float]] = []   # (tool, hook seconds, lookup tool seconds)
        self.pre_done: dict[str, float] = {}
        self.sdk_call: list[float] = []
        self._lookup = 0.0
        post = hooks["PostToolUse"][0].hooks[0]
        call = hooks.servers.call

        async def timed_call(server: str, tool: str, arguments: dict[str, Any]) -> Any:
            started = time.perf_counter()
            try:
                return await call(server, tool, arguments)
            finally:
                self._lookup += time.perf_counter() - started

        async def timed_post(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
            arrived = time.perf_counter()
            if data.get("tool_use_id") in self.pre_done:
                self.sdk_call.append(arrived - self.pre_done.pop(data["tool_use_id"]))
            self._lookup = 0.0
            out = await post(data, tool_use_id, context)
            self.hook_times.append((data["tool_name"], time.perf_counter() - arrived, self._lookup))
            return out

        async def pre(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
            self.pre_done[data["tool_use_id"]] = time.perf_counter()
            return {}

        from claude_agent_sdk import HookMatcher

        hooks.servers.call = timed_call
        hooks["PostToolUse"][0].hooks[0] = timed_post
        hooks["PreToolUse"] = [HookMatcher(hooks=[pre])]


def summary(timed: Timed, turn_walls: list[float]) -> dict[str, Any]:
    plain = [t for name, t, lk in timed.hook_times if name.endswith("get_customer")]
    looked = [(t, lk) for name, t, lk in timed.hook_times if name.endswith("get_order")]
    sdk = statistics.median(timed.sdk_call) if timed.sdk_call else float("nan")
    out = {"hook_no_lookup": ms(plain), "hook_one_lookup": ms([t for t, _ in looked]),
           "lookup_tool_time": ms([lk for _, lk in looked]),
           "hook_one_lookup_beyond_tool": ms([t - lk for t, lk in looked]),
           "sdk_tool_call": ms(timed.sdk_call), "sdk_turn_wall": ms(turn_walls)}
    if timed.sdk_call and plain:
        out["ratio_no_lookup_to_sdk_call"] = round(statistics.median(plain) / sdk, 4)
        out["ratio_one_lookup_to_sdk_call"] = round(statistics.median([t for t, _ in looked]) / sdk, 4)
    return out


def cli_run(pairs: int, folder: Path) -> dict[str, Any]:
    replies = []
    for k in range(pairs):
        replies.append(Reply(calls=[("mcp__shop__get_customer", {"customer_id": f"C{900 + k}"})]))
        replies.append(Reply(calls=[("mcp__shop__get_order", {"order_id": f"O{k}"})]))
    replies.append(Reply(text="done"))
    shop = Shop()
    servers = {"shop": shop_server(shop)}
    hooks = claude_hooks(flow_then("get_customer"), mcp_servers=servers, store=folder / "sessions")
    timed = Timed(hooks)
    stamps: list[float] = []
    brain = scripted(replies)

    def stamped(body: dict[str, Any]) -> Reply:
        stamps.append(time.perf_counter())
        return brain(body)

    with ScriptedMessagesAPI(stamped, lifetime=600) as api:
        asyncio.run(run_client(["go"], cli_options(api, folder, servers, hooks, max_turns=4 * pairs + 10), hooks))
    hooks.close()
    lookups = len(hooks.lookups)
    assert lookups == pairs, f"expected one lookup per get_order, made {lookups}"
    return {"calls": len(timed.hook_times), "lookups": lookups,
            **summary(timed, [b - a for a, b in zip(stamps, stamps[1:])])}


async def direct(n: int, folder: Path | None, per_session: int = 20) -> dict[str, Any]:
    """The hook called directly (no CLI): same flow and tools, sessions of `per_session` calls
    (the first hook of each session, which lists the servers' tools, is not counted).
    `folder=None` records nothing, which shows what recording costs."""
    hooks = claude_hooks(flow_then("get_customer"), mcp_servers={"shop": shop_server(Shop())},
                         store=folder if folder is not None else False)
    timed = Timed(hooks)
    post = hooks["PostToolUse"][0].hooks[0]
    prompt = hooks["UserPromptSubmit"][0].hooks[0]
    for s in range(max(1, n // per_session)):
        base = {"session_id": f"direct-{s}", "transcript_path": "", "cwd": "/"}
        await prompt({**base, "hook_event_name": "UserPromptSubmit", "prompt": "hello"}, None, {})
        for k in range(per_session):
            if k % 2:
                order = f"O{k}"
                data = {**base, "tool_name": "mcp__shop__get_order", "tool_input": {"order_id": order},
                        "tool_response": [{"type": "text", "text": order_json(order)}]}
            else:
                customer = f"C{900 + k}"
                data = {**base, "tool_name": "mcp__shop__get_customer", "tool_input": {"customer_id": customer},
                        "tool_response": [{"type": "text", "text": customer_json(customer)}]}
            data.update(hook_event_name="PostToolUse", tool_use_id=f"t{s}-{k}")
            await post(data, data["tool_use_id"], {})
    out = summary(timed, [])
    made = len(hooks.lookups)
    assert made == max(1, n // per_session) * (per_session // 2), f"expected one lookup per get_order, made {made}"
    await hooks.aclose()
    return {key: value for key, value in out.items() if not key.startswith(("sdk", "ratio"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20, help="model turns of each kind in the CLI run")
    parser.add_argument("--direct", type=int, default=2000, help="direct hook calls (no CLI)")
    parser.add_argument("--out", type=Path, default=REPO / "bench-out" / "adapter_overhead_claude.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = {"cli": cli_run(args.pairs, Path(tmp)),
                  "direct": asyncio.run(direct(args.direct, Path(tmp) / "direct")),
                  "direct_unrecorded": asyncio.run(direct(args.direct, None))}
    from claude_agent_sdk import __version__ as sdk_version

    report["versions"] = {"claude_agent_sdk": sdk_version}
    cli, dr = report["cli"], report["direct"]
    print(f"SDK's own tool call (PreToolUse answer -> PostToolUse): p50 {cli['sdk_tool_call']['p50_ms']} ms; "
          f"model turn wall: p50 {cli['sdk_turn_wall']['p50_ms']} ms")
    for label, part in (("in the CLI run", cli), ("called directly", dr),
                        ("called directly, recording nothing", report["direct_unrecorded"])):
        print(f"hook {label}: no lookup p50 {part['hook_no_lookup']['p50_ms']} ms; one lookup p50 "
              f"{part['hook_one_lookup']['p50_ms']} ms = tool {part['lookup_tool_time']['p50_ms']} ms + "
              f"{part['hook_one_lookup_beyond_tool']['p50_ms']} ms")
    print(f"ratio to the SDK's own call: no lookup {cli.get('ratio_no_lookup_to_sdk_call')}, "
          f"one lookup {cli.get('ratio_one_lookup_to_sdk_call')}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
