"""What the LangGraph adapter adds to each tool call, next to what LangGraph itself spends on one.

    python benchmarks/adapter_overhead_langgraph.py [--runs 60] [--calls 10] [--out bench-out/adapter_overhead_langgraph.json]

End to end: a scripted model makes `--calls` tool calls (one per turn) and a reply; each run is
timed whole through a real `create_agent` (and a plain graph with a wrapped `ToolNode`), by
`invoke` and by `ainvoke`, in seven arms interleaved run by run:

- langgraph: no stretto (LangGraph's own time per call: a model step and a tool step);
- empty hooks: a middleware (or tool node wrapper) with stretto's hooks that does nothing;
- handler lookup: empty hooks that make one extra tool call through the handler after each
  call and append its text: what the lookup's own call costs LangChain, stretto aside;
- recording: `StrettoMiddleware` with no flow (records the session, makes no lookup);
- no lookup: a flow that decides after each call (a customer) and finds nothing to look up;
- no lookup unrecorded: the same with `store=False` (what recording sessions to disk costs);
- one lookup: a flow that makes one lookup after each call (a customer after its order).

stretto's added time per call is an arm's median per-call time minus empty hooks' (what any
middleware costs), as a share of langgraph's own; a lookup's is the one-lookup arm minus the
handler-lookup arm (what the call itself costs). Times are wall time and the process's CPU
time (all threads; steadier on a shared machine). In isolation: the middleware's own hooks
called directly around handlers that do nothing else, so only stretto's time is counted.
Goals: no lookup under 0.2 ms; one lookup under the lookup's own tool time plus 1 ms.
Sessions are recorded to a temp folder.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import StructuredTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime

from stretto_core import ToolCall, ToolManifest
from stretto_core.flow.ir import learn
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolResult, UserMessage
from stretto_langgraph import StrettoMiddleware, StrettoState, StrettoToolWrapper


class Scripted(BaseChatModel):
    """Calls `tool` on a fresh order each turn for `calls` turns, then replies."""

    tool: str
    calls: int
    made: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "Scripted":
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.made += 1
        if self.made > self.calls:
            self.made = 0
            return ChatResult(generations=[ChatGeneration(message=AIMessage("done"))])
        n = self.made
        args = {"order_id": f"O{n}"} if self.tool == "get_order" else {"customer_id": f"C{n}"}
        call = {"name": self.tool, "args": args, "id": f"call_{n}", "type": "tool_call"}
        return ChatResult(generations=[ChatGeneration(message=AIMessage("", tool_calls=[call]))])


def get_order(order_id: str) -> str:
    """Look up an order."""
    return json.dumps({"order_id": order_id, "customer_id": "C" + order_id[1:], "status": "delivered"})


def get_customer(customer_id: str) -> str:
    """Look up a customer."""
    return json.dumps({"customer_id": customer_id, "tier": "gold"})


def refund(order_id: str) -> str:
    """Refund an order."""
    return "refunded"


TOOLS = [StructuredTool.from_function(f) for f in (get_order, get_customer, refund)]
READS = ["get_order", "get_customer"]


def toy_flow() -> Any:
    """Learned from walks order -> customer -> refund: after an order its customer, after a customer nothing."""
    sessions = []
    for i in range(10):
        o = f"O{100 + i}"
        c = "C" + o[1:]
        steps = [("get_order", {"order_id": o}, get_order(o)), ("get_customer", {"customer_id": c}, get_customer(c)),
                 ("refund", {"order_id": o}, "refunded")]
        events: list[Any] = [UserMessage(text=f"refund {o}")]
        for n, (tool, args, content) in enumerate(steps):
            events += [LLMTurn(calls=[ToolCall(call_id=f"t{n}", tool=tool, arguments=args)]),
                       ToolResult(call_id=f"t{n}", tool=tool, content=content)]
        sessions.append(Session(header=SessionHeader(session_id=f"s{i}", harness="toy"), events=events))
    return learn(sessions, ToolManifest.declare(reads=READS, writes=["refund"]))


def plain_graph(model: BaseChatModel, tool_node: Any) -> Any:
    def node(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    async def anode(state: MessagesState) -> dict:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", RunnableLambda(node, afunc=anode))
    builder.add_node("tools", tool_node)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile()


def build(front: str, arm: str, calls: int, flow: Any, store: Path | bool) -> tuple[Any, Any]:
    """A graph for one arm, and the object whose `close()` ends its sessions (or None)."""
    tool = "get_customer" if arm.startswith("no lookup") else "get_order"
    model = Scripted(tool=tool, calls=calls)
    if arm == "langgraph":
        graph = create_agent(model, TOOLS) if front == "agent" else plain_graph(model, ToolNode(TOOLS))
        return graph, None
    if arm in ("empty hooks", "handler lookup"):
        hooks = EmptyHooks() if arm == "empty hooks" else HandlerLookup()
        if front == "agent":
            return create_agent(model, TOOLS, middleware=[hooks]), None
        node = ToolNode(TOOLS, wrap_tool_call=hooks.wrap_tool_call, awrap_tool_call=hooks.awrap_tool_call)
        return plain_graph(model, node), None
    served = None if arm == "recording" else flow
    if arm.endswith("unrecorded"):
        store = False  # type: ignore[assignment]
    if front == "agent":
        server: Any = StrettoMiddleware(served, reads=READS, writes=["refund"], store=store)
        return create_agent(model, TOOLS, middleware=[server]), server
    server = StrettoToolWrapper(served, reads=READS, writes=["refund"], store=store)
    return plain_graph(model, server.tool_node(TOOLS)), server


class EmptyHooks(AgentMiddleware):
    """A middleware with stretto's hooks and state that does nothing: LangChain's cost of hooks."""

    state_schema = StrettoState

    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"stretto_run": "run"}

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"stretto_run": "run"}

    def after_agent(self, state: Any, runtime: Any) -> None:
        return None

    async def aafter_agent(self, state: Any, runtime: Any) -> None:
        return None

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        return handler(request)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)


class HandlerLookup(EmptyHooks):
    """Empty hooks that make one extra call of `get_customer` through the handler after each call
    and append its text, with no stretto at all: what a lookup costs LangChain itself."""

    @staticmethod
    def _extra(request: Any) -> Any:
        customer = "C" + request.tool_call["args"]["order_id"][1:]
        call = {"name": "get_customer", "args": {"customer_id": customer}, "id": "x-" + customer, "type": "tool_call"}
        return replace(request, tool_call=call, tool=TOOLS[1])

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        message = handler(request)
        extra = handler(self._extra(request))
        return message.model_copy(update={"content": message.content + "\n" + extra.content})

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        message = await handler(request)
        extra = await handler(self._extra(request))
        return message.model_copy(update={"content": message.content + "\n" + extra.content})


def timed_run(graph: Any, mode: str, server: Any) -> tuple[float, float]:
    """One run's wall and CPU seconds."""
    state = {"messages": [HumanMessage("refund my orders")]}
    wall, cpu = time.perf_counter(), time.process_time()
    if mode == "sync":
        graph.invoke(state)
    else:
        asyncio.run(graph.ainvoke(state))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if server is not None and isinstance(server, StrettoToolWrapper):
        server.close()  # a plain graph's sessions are closed by their owner
    return wall, cpu


def tool_alone(runs: int) -> float:
    """Median seconds of one `get_customer` tool call through LangChain's tool machinery."""
    tool = TOOLS[1]
    times = []
    for i in range(runs):
        call = {"name": "get_customer", "args": {"customer_id": f"C{i}"}, "id": f"x{i}", "type": "tool_call"}
        started = time.perf_counter()
        tool.invoke(call)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


ARMS = ["langgraph", "empty hooks", "handler lookup", "recording", "no lookup", "no lookup unrecorded", "one lookup"]
SERVED = ARMS[3:]
ISOLATED = ["recording", "no lookup", "one lookup"]


def measure(front: str, mode: str, runs: int, calls: int, flow: Any, store: Path) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds per tool call of each arm, the arms interleaved run by run."""
    per_call: dict[str, list[tuple[float, float]]] = {arm: [] for arm in ARMS}
    graphs = {arm: build(front, arm, calls, flow, store / front / mode / arm.replace(" ", "-")) for arm in ARMS}
    for arm in ARMS:  # warm up
        timed_run(*graphs[arm][:1], mode, graphs[arm][1])
    for _ in range(runs):
        for arm in ARMS:
            graph, server = graphs[arm]
            wall, cpu = timed_run(graph, mode, server)
            per_call[arm].append((wall / calls, cpu / calls))
    for arm in ARMS:
        server = graphs[arm][1]
        if server is not None:
            server.close()
    return {arm: (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
            for arm, values in per_call.items()}


def lookups_per_call(folder: Path) -> float:
    """Lookups recorded per agent tool call in an arm's session files."""
    from stretto_core import read_session

    calls = lookups = 0
    for path in folder.glob("*.jsonl"):
        for event in read_session(path).events:
            calls += event.kind == "tool_result"
            lookups += event.kind == "lookup"
    return lookups / calls if calls else 0.0


def isolated(arm: str, mode: str, runs: int, calls: int, flow: Any, store: Path | bool) -> tuple[float, float]:
    """Median (wall, CPU) seconds per tool call of the middleware's own hooks, around handlers
    that only return what the model and the tool would, so only stretto's time is counted."""
    middleware = StrettoMiddleware(None if arm == "recording" else flow, reads=READS, writes=["refund"],
                                   store=store)
    tool = "get_customer" if arm == "no lookup" else "get_order"
    by_name = {t.name: t for t in TOOLS}

    def execute(req: ToolCallRequest) -> ToolMessage:
        c = req.tool_call
        return ToolMessage(by_name[c["name"]].func(**c["args"]), tool_call_id=c["id"], name=c["name"])

    async def aexecute(req: ToolCallRequest) -> ToolMessage:
        return execute(req)

    def requests(run: int, n: int, state: dict[str, Any]) -> tuple[AIMessage, ModelRequest, ToolCallRequest]:
        args = {"order_id": f"O{n}"} if tool == "get_order" else {"customer_id": f"C{n}"}
        call = {"name": tool, "args": args, "id": f"call_{n}", "type": "tool_call"}
        turn = AIMessage("", id=f"ai{run}-{n}", tool_calls=[call])
        model_request = ModelRequest(model=MODEL, messages=state["messages"], tools=TOOLS, state=state)
        runtime = ToolRuntime(state=state, context=None, config={}, stream_writer=None, tool_call_id=call["id"],
                              store=None, tools=TOOLS)
        return turn, model_request, ToolCallRequest(tool_call=call, tool=by_name[tool], state=state, runtime=runtime)

    def new_state(run: int) -> dict[str, Any]:
        return {"messages": [HumanMessage("refund my orders", id=f"h{run}")], "stretto_run": f"run{run}"}

    def sync_run(run: int) -> tuple[float, float]:
        state, wall, cpu = new_state(run), 0.0, 0.0
        for n in range(1, calls + 1):
            turn, model_request, tool_request = requests(run, n, state)
            w, c = time.perf_counter(), time.process_time()
            middleware.wrap_model_call(model_request, lambda req: ModelResponse(result=[turn]))
            message = middleware.wrap_tool_call(tool_request, execute)
            wall, cpu = wall + time.perf_counter() - w, cpu + time.process_time() - c
            state["messages"] = [*state["messages"], turn, message]
        middleware.after_agent(state, None)
        return wall, cpu

    async def async_run(run: int) -> tuple[float, float]:
        state, wall, cpu = new_state(run), 0.0, 0.0
        for n in range(1, calls + 1):
            turn, model_request, tool_request = requests(run, n, state)

            async def amodel(req: ModelRequest, turn: AIMessage = turn) -> ModelResponse:
                return ModelResponse(result=[turn])

            w, c = time.perf_counter(), time.process_time()
            await middleware.awrap_model_call(model_request, amodel)
            message = await middleware.awrap_tool_call(tool_request, aexecute)
            wall, cpu = wall + time.perf_counter() - w, cpu + time.process_time() - c
            state["messages"] = [*state["messages"], turn, message]
        await middleware.aafter_agent(state, None)
        return wall, cpu

    handler_wall, handler_cpu = _handlers_alone(execute, requests(0, 1, new_state(0))[2])
    walls, cpus = [], []
    for run in range(runs + 3):
        wall, cpu = sync_run(run) if mode == "sync" else asyncio.run(async_run(run))
        if run >= 3:  # the first runs warm up
            walls.append(wall / calls - handler_wall)
            cpus.append(cpu / calls - handler_cpu)
    middleware.close()
    return statistics.median(walls), statistics.median(cpus)


def _handlers_alone(execute: Callable[[Any], Any], request: Any, runs: int = 2000) -> tuple[float, float]:
    """What the do-nothing tool handler costs by itself, per call (taken out of the isolated times)."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(runs):
        execute(request)
    return (time.perf_counter() - wall) / runs, (time.process_time() - cpu) / runs


MODEL = Scripted(tool="get_order", calls=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--calls", type=int, default=10, help="tool calls per run (one session per run)")
    parser.add_argument("--out", type=Path, default=Path("bench-out/adapter_overhead_langgraph.json"))
    args = parser.parse_args()
    flow = toy_flow()
    lookup_tool = tool_alone(2000)
    report: dict[str, Any] = {"runs": args.runs, "calls_per_run": args.calls,
                              "lookup_tool_ms": round(lookup_tool * 1e3, 4), "end_to_end": [], "isolated": []}
    print(f"the lookup's tool alone (StructuredTool.invoke): {lookup_tool * 1e3:.3f} ms")
    ms = lambda seconds: round(seconds * 1e3, 4)  # noqa: E731
    with tempfile.TemporaryDirectory() as folder:
        base_cpu_of: dict[str, float] = {}
        print("end to end, per tool call (wall | CPU): langgraph's own time, what empty hooks add to it, and what")
        print("stretto adds over empty hooks (share of langgraph's own CPU time)")
        for front in ("agent", "graph"):
            for mode in ("sync", "async"):
                times = measure(front, mode, args.runs, args.calls, flow, Path(folder))
                base_wall, base_cpu = times["langgraph"]
                hooks_wall, hooks_cpu = times["empty hooks"]
                base_cpu_of[mode] = base_cpu_of.get(mode) or base_cpu
                lookup_wall, lookup_cpu = times["handler lookup"][0] - hooks_wall, times["handler lookup"][1] - hooks_cpu
                row: dict[str, Any] = {"front": front, "mode": mode, "langgraph_ms_per_call": ms(base_wall),
                                       "langgraph_cpu_ms_per_call": ms(base_cpu),
                                       "empty_hooks_added_ms": ms(hooks_wall - base_wall),
                                       "empty_hooks_added_cpu_ms": ms(hooks_cpu - base_cpu),
                                       "handler_lookup_added_ms": ms(lookup_wall),
                                       "handler_lookup_added_cpu_ms": ms(lookup_cpu)}
                line = [f"  {front:<5} {mode:<5} langgraph {base_wall * 1e3:4.2f} | {base_cpu * 1e3:4.2f} ms",
                        f"hooks {(hooks_wall - base_wall) * 1e3:+5.2f} | {(hooks_cpu - base_cpu) * 1e3:+5.2f}",
                        f"a call via the handler {lookup_wall * 1e3:+5.2f} | {lookup_cpu * 1e3:+5.2f}"]
                for arm in SERVED:
                    key = arm.replace(" ", "_")
                    wall, cpu = times[arm][0] - hooks_wall, times[arm][1] - hooks_cpu
                    row[key + "_added_ms"], row[key + "_added_cpu_ms"] = ms(wall), ms(cpu)
                    row[key + "_ratio"], row[key + "_cpu_ratio"] = round(wall / base_wall, 4), round(cpu / base_cpu, 4)
                    row[key + "_lookups_per_call"] = round(
                        lookups_per_call(Path(folder) / front / mode / arm.replace(" ", "-")), 3)
                    line.append(f"{arm} {wall * 1e3:+5.2f} | {cpu * 1e3:+5.2f} ({cpu / base_cpu:+.0%})")
                row["one_lookup_beyond_its_call_ms"] = ms(times["one lookup"][0] - times["handler lookup"][0])
                row["one_lookup_beyond_its_call_cpu_ms"] = ms(times["one lookup"][1] - times["handler lookup"][1])
                row["meets_goals_cpu"] = (row["no_lookup_added_cpu_ms"] < 0.2
                                          and row["one_lookup_beyond_its_call_cpu_ms"] < 1.0)
                line.append(f"one lookup beyond its call {row['one_lookup_beyond_its_call_ms']:+5.2f} | "
                            f"{row['one_lookup_beyond_its_call_cpu_ms']:+5.2f}")
                print("   ".join(line))
                report["end_to_end"].append(row)
        print("in isolation (the middleware's hooks called directly), per tool call (wall | CPU), "
              "and as a share of langgraph's own CPU time")
        for store in ("disk", "none"):
            for mode in ("sync", "async"):
                row = {"mode": mode, "store": store}
                line = [f"  {mode:<5} sessions to {store:<4}"]
                for arm in ISOLATED:
                    where: Path | bool = Path(folder) / "isolated" / mode / arm if store == "disk" else False
                    wall, cpu = isolated(arm, mode, args.runs, args.calls, flow, where)
                    key = arm.replace(" ", "_")
                    row[key + "_ms"], row[key + "_cpu_ms"] = ms(wall), ms(cpu)
                    row[key + "_cpu_ratio"] = round(cpu / base_cpu_of[mode], 4)
                    line.append(f"{arm} {wall * 1e3:5.3f} | {cpu * 1e3:5.3f} ms ({cpu / base_cpu_of[mode]:.0%})")
                row["meets_goals_cpu"] = row["no_lookup_cpu_ms"] < 0.2 and row["one_lookup_cpu_ms"] < 1.0
                print("   ".join(line) + f"   goals met (CPU): {row['meets_goals_cpu']}")
                report["isolated"].append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
