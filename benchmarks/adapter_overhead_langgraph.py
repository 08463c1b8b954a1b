"""What the LangGraph adapter adds to each tool call, next to what LangGraph itself spends on one.

    python benchmarks/adapter_overhead_langgraph.py [--runs 40] [--calls 10] [--out bench-out/adapter_overhead_langgraph.json]

A scripted model makes `--calls` tool calls (one per turn) and a reply; each run is timed whole
through a real `create_agent` (and a plain graph with a wrapped `ToolNode`), by `invoke` and by
`ainvoke`, in five arms interleaved run by run:

- langgraph: no stretto (LangGraph's own time per call: a model step and a tool step);
- recording: `StrettoMiddleware` with no flow (records the session, makes no lookup);
- no lookup: a flow that decides after each call (a customer) and finds nothing to look up;
- one lookup: a flow that makes one lookup after each call (a customer after its order);
- the lookup's tool alone: the `get_customer` tool invoked directly, the time any lookup costs.

Added time per call is the arm's median per-call time minus langgraph's. Goals: no lookup under
0.2 ms; one lookup under the tool's own time plus 1 ms. Sessions are recorded to a temp folder.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import StructuredTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition

from stretto_core import ToolCall, ToolManifest
from stretto_core.flow.ir import learn
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolResult, UserMessage
from stretto_langgraph import StrettoMiddleware, StrettoToolWrapper


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


def build(front: str, arm: str, calls: int, flow: Any, store: Path) -> tuple[Any, Any]:
    """A graph for one arm, and the object whose `close()` ends its sessions (or None)."""
    tool = "get_customer" if arm == "no lookup" else "get_order"
    model = Scripted(tool=tool, calls=calls)
    if arm == "langgraph":
        from langgraph.prebuilt import ToolNode

        graph = create_agent(model, TOOLS) if front == "agent" else plain_graph(model, ToolNode(TOOLS))
        return graph, None
    served = None if arm == "recording" else flow
    if front == "agent":
        server: Any = StrettoMiddleware(served, reads=READS, writes=["refund"], store=store)
        return create_agent(model, TOOLS, middleware=[server]), server
    server = StrettoToolWrapper(served, reads=READS, writes=["refund"], store=store)
    return plain_graph(model, server.tool_node(TOOLS)), server


def timed_run(graph: Any, mode: str, server: Any) -> float:
    state = {"messages": [HumanMessage("refund my orders")]}
    started = time.perf_counter()
    if mode == "sync":
        graph.invoke(state)
    else:
        asyncio.run(graph.ainvoke(state))
    seconds = time.perf_counter() - started
    if server is not None and isinstance(server, StrettoToolWrapper):
        server.close()  # a plain graph's sessions are closed by their owner
    return seconds


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


ARMS = ["langgraph", "recording", "no lookup", "one lookup"]


def measure(front: str, mode: str, runs: int, calls: int, flow: Any, store: Path) -> dict[str, float]:
    """Median seconds per tool call of each arm, the arms interleaved run by run."""
    per_call: dict[str, list[float]] = {arm: [] for arm in ARMS}
    graphs = {arm: build(front, arm, calls, flow, store / front / mode / arm.replace(" ", "-")) for arm in ARMS}
    for arm in ARMS:  # warm up
        timed_run(*graphs[arm][:1], mode, graphs[arm][1])
    for _ in range(runs):
        for arm in ARMS:
            graph, server = graphs[arm]
            per_call[arm].append(timed_run(graph, mode, server) / calls)
    for arm in ARMS:
        server = graphs[arm][1]
        if server is not None:
            server.close()
    return {arm: statistics.median(values) for arm, values in per_call.items()}


def lookups_per_call(folder: Path) -> float:
    """Lookups recorded per agent tool call in an arm's session files."""
    from stretto_core import read_session

    calls = lookups = 0
    for path in folder.glob("*.jsonl"):
        for event in read_session(path).events:
            calls += event.kind == "tool_result"
            lookups += event.kind == "lookup"
    return lookups / calls if calls else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--calls", type=int, default=10, help="tool calls per run (one session per run)")
    parser.add_argument("--out", type=Path, default=Path("bench-out/adapter_overhead_langgraph.json"))
    args = parser.parse_args()
    flow = toy_flow()
    lookup_tool = tool_alone(2000)
    report: dict[str, Any] = {"runs": args.runs, "calls_per_run": args.calls,
                              "lookup_tool_ms": round(lookup_tool * 1e3, 4), "results": []}
    print(f"the lookup's tool alone (StructuredTool.invoke): {lookup_tool * 1e3:.3f} ms")
    with tempfile.TemporaryDirectory() as folder:
        for front in ("agent", "graph"):
            for mode in ("sync", "async"):
                times = measure(front, mode, args.runs, args.calls, flow, Path(folder))
                base = times["langgraph"]
                row: dict[str, Any] = {"front": front, "mode": mode, "langgraph_ms_per_call": round(base * 1e3, 4)}
                line = [f"{front:<5} {mode:<5} langgraph {base * 1e3:6.3f} ms/call"]
                for arm in ARMS[1:]:
                    added = times[arm] - base
                    row[arm.replace(" ", "_") + "_added_ms"] = round(added * 1e3, 4)
                    row[arm.replace(" ", "_") + "_ratio"] = round(added / base, 4)
                    line.append(f"{arm} +{added * 1e3:6.3f} ms ({added / base:+.1%})")
                for arm in ARMS[1:]:
                    row[arm.replace(" ", "_") + "_lookups_per_call"] = round(
                        lookups_per_call(Path(folder) / front / mode / arm.replace(" ", "-")), 3)
                row["one_lookup_added_minus_tool_ms"] = round((times["one lookup"] - base - lookup_tool) * 1e3, 4)
                row["meets_goals"] = (row["no_lookup_added_ms"] < 0.2
                                      and row["one_lookup_added_minus_tool_ms"] < 1.0)
                line.append(f"one lookup minus its tool +{row['one_lookup_added_minus_tool_ms']:.3f} ms")
                print("   ".join(line))
                report["results"].append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
