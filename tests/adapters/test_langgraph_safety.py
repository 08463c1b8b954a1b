"""Safety at the adapter: over generated flows, tool sets and kinds, stretto only calls known reads.

Each case learns a flow from sessions that walk a generated chain of tools (each call takes the
value the previous result named), under generated kinds, some of them wrong on purpose. It then
serves the same walk through a real `create_agent` or a plain graph, sync or async, with
generated `reads=` / `writes=` and tool metadata. Every call stretto makes (its call ids start
`stretto-`) must be of a tool the serving authority marks read and the flow learned as read.
Enough of the cases must have made lookups for the property to say anything.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.tools import InjectedToolCallId, StructuredTool

from langchain.agents import create_agent

from langgraph_support import FRONTS, MODES, ScriptedChatModel, calls, invoke, plain_graph, reply
from stretto_core import ToolCall, ToolKind, ToolManifest
from stretto_core.flow.ir import learn
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolResult, UserMessage
from stretto_langgraph import StrettoMiddleware, StrettoToolWrapper

NAMES = [f"tool_{i}" for i in range(5)]


def result(x: str) -> dict[str, str]:
    return {"x": x, "next": x + "1"}


def make_tools(hints: dict[str, bool | None], log: list[tuple[str, str]]) -> list[StructuredTool]:
    tools = []
    for name in NAMES:
        def run(x: str, tool_call_id: Annotated[str, InjectedToolCallId], _name: str = name) -> str:
            log.append((_name, tool_call_id))
            return json.dumps(result(x))

        tool = StructuredTool.from_function(run, name=name, description=f"{name} of x")
        if hints[name] is not None:
            tool.metadata = {"readOnlyHint": hints[name]}
        tools.append(tool)
    return tools


def walk_session(index: int, chain: list[str], start: str) -> Session:
    events: list[Any] = [UserMessage(text=f"start from {start}")]
    x = start
    for n, tool in enumerate(chain):
        events.append(LLMTurn(calls=[ToolCall(call_id=f"c{n}", tool=tool, arguments={"x": x})]))
        events.append(ToolResult(call_id=f"c{n}", tool=tool, content=json.dumps(result(x)), parsed=result(x)))
        x = result(x)["next"]
    events.append(LLMTurn(text="walked"))
    return Session(header=SessionHeader(session_id=f"walk-{index}", harness="generated"), events=events)


def known_read(name: str, reads: set[str], writes: set[str], hints: dict[str, bool | None]) -> bool:
    """The serving authority's verdict, worked out here independently of the core."""
    says_read = name in reads or hints[name] is True
    says_not = name in writes or hints[name] is False
    return says_read and not says_not


kinds = st.sampled_from([ToolKind.read, ToolKind.read, ToolKind.write])
hint = st.sampled_from([True, True, False, None])


def serve_walk(flow: Any, chain: list[str], hints: dict[str, bool | None], options: dict[str, Any],
               front: str, mode: str) -> list[str]:
    """Walk the chain through a real agent or graph; the tools stretto called, in order."""
    log: list[tuple[str, str]] = []
    tools = make_tools(hints, log)
    steps, x = [], "w"
    for n, tool in enumerate(chain):
        steps.append(calls((tool, {"x": x}), prefix=f"turn{n}"))
        x = result(x)["next"]
    model = ScriptedChatModel(steps=[*steps, reply("walked")])
    if front == "agent":
        graph = create_agent(model, tools, middleware=[StrettoMiddleware(flow, store=False, **options)])
    else:
        graph = plain_graph(model, StrettoToolWrapper(flow, store=False, **options).tool_node(tools))
    invoke(graph, "start from w", mode)
    return [name for name, call_id in log if call_id.startswith("stretto-")]


def test_stretto_only_ever_calls_known_reads_through_langgraph() -> None:
    stats = {"cases": 0, "with_lookups": 0, "lookups": 0, "tempted": 0}

    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(chain=st.lists(st.sampled_from(NAMES), min_size=2, max_size=5),
           learned=st.fixed_dictionaries({n: kinds for n in NAMES}),
           hints=st.fixed_dictionaries({n: hint for n in NAMES}),
           reads=st.sets(st.sampled_from(NAMES), min_size=1), writes=st.sets(st.sampled_from(NAMES), max_size=2),
           front=st.sampled_from(FRONTS), mode=st.sampled_from(MODES), theta=st.sampled_from([0.05, 0.3]))
    def check(chain: list[str], learned: dict[str, ToolKind], hints: dict[str, bool | None], reads: set[str],
              writes: set[str], front: str, mode: str, theta: float) -> None:
        manifest = ToolManifest(tools={n: {"kind": k} for n, k in learned.items()})
        flow = learn([walk_session(i, chain, f"v{i}") for i in range(8)], manifest)
        made = serve_walk(flow, chain, hints, dict(reads=sorted(reads), writes=sorted(writes), theta=theta),
                          front, mode)
        for name in made:
            assert known_read(name, reads, writes, hints), f"stretto called {name}, not a known read"
            assert learned[name] is ToolKind.read, f"stretto called {name}, which the flow learned as a write"
        # the control: the same flow, told every tool is a read, would it have called one that is not?
        permissive = serve_walk(flow, chain, dict.fromkeys(NAMES), dict(reads=NAMES, theta=theta), front, mode)
        stats["cases"] += 1
        stats["with_lookups"] += bool(made)
        stats["lookups"] += len(made)
        stats["tempted"] += any(not known_read(n, reads, writes, hints) for n in permissive)

    check()
    assert stats["cases"] >= 50
    assert stats["with_lookups"] >= 0.25 * stats["cases"], stats  # the property is not vacuous
    assert stats["tempted"] >= 0.1 * stats["cases"], stats  # and the flows did want what the guard refused
