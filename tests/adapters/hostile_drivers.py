"""One agent turn through each adapter and the proxy, for the hostile-input matrix
(test_hostile_matrix.py): the agent calls `get_order`, whose result is a text the test chooses,
and stretto's flow then looks up the order's customer with a tool that misbehaves as asked.

Each driver returns what the agent saw (its own result, stretto's appendix split off), the
recorded session's events, and the arguments the lookup's tool was really called with. The
drivers reuse each adapter's own test support (its shop's flow, scripted model and runner)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from stretto_core import read_session
from stretto_core.serve.results import split_appendix

ORDER, CUSTOMER = "O7", "C7"
CUT = "half an emoji: \ud83d"
LIMITS = {"lookup_timeout": 1.0, "call_budget": 2.0}
"""Short enough that a hung lookup costs a second; long enough that a slow one (50 ms) fits."""
WAIT = 60.0
"""Seconds a driver waits for the agent's turn before it calls it hung (far above any cell)."""
RELEASE = threading.Event()
"""A hung sync tool waits on this; the matrix sets it once a cell is checked."""
BEHAVIOURS = ("ok", "slow", "raise", "garbage", "hang", "surrogate")


@dataclass
class Outcome:
    """What one turn left: the agent's own result as it saw it, what stretto appended to it,
    the recorded events, the read tool's real calls, and the processes the turn started."""

    own_seen: str
    appended: str
    events: list[Any]
    looked_up: list[dict[str, Any]]
    processes: list[int] = field(default_factory=list)


class Garbage:
    """A tool answer nothing can turn into text."""

    def __str__(self) -> str:
        raise ValueError("cannot be shown")

    __repr__ = __str__


def misbehave(how: str, customer_id: str) -> Any:
    """The customer lookup's answer, misbehaving as `how` says (a plain sync function)."""
    if how == "slow":
        time.sleep(0.05)
    if how == "raise":
        raise RuntimeError("the customer service is down")
    if how == "hang":
        RELEASE.wait(WAIT)
        return "{}"
    if how == "garbage":
        return Garbage()
    note = {"note": CUT} if how == "surrogate" else {}
    return json.dumps({"customer_id": customer_id, "tier": "gold", **note}, ensure_ascii=False)


def within(seconds: float, turn: Callable[[], Outcome]) -> Outcome:
    """Run the turn in a daemon thread; fail, naming it, if it has not come back in time."""
    done: list[Any] = []

    def run() -> None:
        try:
            done.append(turn())
        except BaseException as exc:  # noqa: BLE001 - handed to the test below
            done.append(exc)

    runner = threading.Thread(target=run, daemon=True, name="hostile-turn")
    runner.start()
    runner.join(seconds)
    assert done, "the agent's turn never came back"
    if isinstance(done[0], BaseException):
        raise done[0]
    return done[0]


def recorded(store: Path) -> list[Any]:
    from stretto_core.sessions.flusher import FLUSHER

    FLUSHER.flush_all()
    [path] = sorted(store.glob("*.jsonl"))
    return read_session(path).events


def split(seen: str) -> tuple[str, str]:
    own, _ = split_appendix(seen)
    return own, seen[len(own):]


# -- the in-process adapters ----------------------------------------------------------------------
def openai_agents(tmp: Path, own: str, how: str) -> Outcome:
    from agents import Runner, function_tool
    from openai_support import READS, WRITES, order_then_done, output_text, outputs_seen, scripted_agent, shop_flow
    from stretto_openai_agents import instrument

    looked: list[dict[str, Any]] = []

    @function_tool
    def get_order(order_id: str) -> str:
        """An order by id."""
        return own

    @function_tool
    def get_customer(customer_id: str) -> Any:
        """A customer by id."""
        looked.append({"customer_id": customer_id})
        return misbehave(how, customer_id)

    @function_tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "refunded"

    agent, model = scripted_agent([get_order, get_customer, refund], order_then_done(ORDER))
    agent = instrument(agent, flow=shop_flow(), reads=READS, writes=WRITES, store=tmp, **LIMITS)
    result = asyncio.run(Runner.run(agent, f"Refund order {ORDER}."))
    assert result.final_output == "Done."
    return Outcome(*split(output_text(outputs_seen(model, 1)["call-1"])), recorded(tmp), looked)


def google_adk(tmp: Path, own: str, how: str) -> Outcome:
    from adk_support import SHOP_READS, ScriptedLlm, function_responses, run_app, shop_flow, steps
    from google.adk.agents import LlmAgent
    from google.adk.tools import FunctionTool
    from stretto_adk import StrettoPlugin

    looked: list[dict[str, Any]] = []

    async def get_order(order_id: str) -> str:
        """Read one order."""
        return own

    def get_customer(customer_id: str) -> Any:
        """Read one customer."""
        looked.append({"customer_id": customer_id})
        return misbehave(how, customer_id)

    async def refund(order_id: str) -> str:
        """Refund an order (a write)."""
        return f"refunded {order_id}"

    brain = steps([("get_order", {"order_id": ORDER})], [("refund", {"order_id": ORDER})], "done")
    model = ScriptedLlm(model="scripted-shop", brain=brain)
    agent = LlmAgent(name="shop", model=model, tools=[FunctionTool(get_order), FunctionTool(get_customer),
                                                      FunctionTool(refund)])
    plugin = StrettoPlugin(flow=shop_flow(), store=tmp, reads=SHOP_READS, writes=["refund"], **LIMITS)
    asyncio.run(run_app(agent, [plugin], [f"please refund order {ORDER}"]))
    (response,) = function_responses(model.requests[1])
    assert set(response.response) == {"result"}, response.response  # a text result, as ADK wraps it
    return Outcome(*split(response.response["result"]), recorded(tmp), looked)


def langgraph(mode: str) -> Callable[[Path, str, str], Outcome]:
    def drive(tmp: Path, own: str, how: str) -> Outcome:
        from langchain_core.tools import StructuredTool
        from langgraph_support import READS, WRITES, Shop, order_then_reply, serve_once, toy_flow

        looked: list[dict[str, Any]] = []

        def get_order(order_id: str) -> str:
            """Look up an order."""
            return own

        def get_customer(customer_id: str) -> Any:
            """Look up a customer."""
            looked.append({"customer_id": customer_id})
            return misbehave(how, customer_id)

        shop = Shop()
        shop.tools[0] = StructuredTool.from_function(get_order)
        shop.tools[1] = StructuredTool.from_function(get_customer)  # sync only: no coroutine of its own
        messages, model, _ = serve_once("agent", mode, shop, order_then_reply(ORDER), tmp, toy_flow(), reads=READS,
                                        writes=WRITES, **LIMITS)
        assert messages[-1].content == "done"
        [seen] = [m.content for m in model.seen[1] if getattr(m, "tool_call_id", None) == "call_1"]
        return Outcome(*split(seen), recorded(tmp), looked)

    return drive


def claude_hooks(tmp: Path, own: str, how: str) -> Outcome:
    from claude_shop import Shop, flow_then, shop_server
    from stretto_claude import claude_hooks as hooks_for
    from test_claude_units import after_get_order

    shop = Shop(loyalty={CUSTOMER: how})  # its get_loyalty misbehaves as asked (async)
    hooks = hooks_for(flow_then("get_loyalty"), mcp_servers={"shop": shop_server(shop)}, store=tmp, **LIMITS)
    out = asyncio.run(after_get_order(hooks, ORDER, response=[{"type": "text", "text": own}]))
    hooks.close()
    blocks = out["hookSpecificOutput"]["updatedMCPToolOutput"] if out else [{"type": "text", "text": own}]
    appended = "\n".join(b["text"] for b in blocks[1:])
    return Outcome(blocks[0]["text"], appended, recorded(tmp), shop.called("get_loyalty"))


# -- the MCP servers: FastMCP with the middleware, and the proxy --------------------------------------
def _order_file(tmp: Path, own: str) -> str:
    path = tmp / "own.json"
    path.write_text(json.dumps(own), encoding="ascii")  # one JSON string: any text, lone surrogates too
    return str(path)


def _calls(log: Path, tool: str) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [c["arguments"] for c in map(json.loads, log.read_text().splitlines()) if c["tool"] == tool]


def children(pid: int) -> list[int]:
    """The processes `pid` started that still run (zombies and the gone left out)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(p) for p in task.read_text().split()]
        except OSError:
            continue
    return [p for p in found if alive(p)]


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def fastmcp_middleware(tmp: Path, own: str, how: str) -> Outcome:
    import anyio
    from mcp import Client
    from test_fastmcp_middleware import shop, texts

    params = shop(tmp)
    env = {"TOY_ORDER_FILE": _order_file(tmp, own)}
    if how == "hang":
        env["TOY_CUSTOMER_HANGS"] = "1"
    elif how == "surrogate":
        env["TOY_CUT_EMOJI"] = "1"
    elif how != "ok":
        env["TOY_CUSTOMER"] = how
    params.env = {**(params.env or os.environ), **env}
    started: list[int] = []

    async def run() -> list[str]:
        with anyio.fail_after(WAIT / 2):
            return await call(params)

    async def call(params: Any) -> list[str]:
        async with Client(params, mode="legacy") as client:
            started.extend(children(os.getpid()))
            return texts(await client.call_tool("get_order", {"order_id": ORDER}))

    got = anyio.run(run)
    return Outcome(got[0], "\n".join(got[1:]), recorded(tmp / "s"), _calls(tmp / "calls.log", "get_customer"),
                   started)


def mcp_proxy(tmp: Path, own: str, how: str) -> Outcome:
    from test_proxy_failures import RawHost

    env = {"TOY_ORDER_FILE": _order_file(tmp, own), "TOY_CALL_LOG": str(tmp / "calls.log")}
    if how in ("slow", "hang"):
        env["TOY_SLOW_CUSTOMER"] = "0.05" if how == "slow" else "30"
    elif how == "surrogate":
        env["TOY_CUT_EMOJI"] = "1"
    elif how != "ok":
        env["TOY_CUSTOMER"] = how
    host = RawHost(tmp, "--lookup-timeout", str(LIMITS["lookup_timeout"]), env=env)
    started = [host.process.pid, *children(host.process.pid)]
    host.call(1, "get_order", {"order_id": ORDER})
    content = host.answer(1)["result"]["content"]
    status, stderr = host.finish()
    assert status == (6 if how == "garbage" else 0), stderr  # 6: the server sent a broken line
    texts = [block["text"] for block in content]
    return Outcome(texts[0], "\n".join(texts[1:]), recorded(tmp / "s"), _calls(tmp / "calls.log", "get_customer"),
                   started)


DRIVERS: dict[str, Callable[[Path, str, str], Outcome]] = {
    "openai-agents": openai_agents, "google-adk": google_adk, "langgraph-invoke": langgraph("sync"),
    "langgraph-ainvoke": langgraph("async"), "claude-hooks": claude_hooks, "fastmcp-middleware": fastmcp_middleware,
    "mcp-proxy": mcp_proxy}
NEEDS = {"openai-agents": "agents", "google-adk": "google.adk", "langgraph-invoke": "langgraph",
         "langgraph-ainvoke": "langgraph", "claude-hooks": "claude_agent_sdk", "fastmcp-middleware": "fastmcp",
         "mcp-proxy": "mcp"}
