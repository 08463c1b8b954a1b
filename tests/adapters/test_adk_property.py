"""Safety at the adapter: over generated flows and tool sets, stretto calls only known reads.

Each case draws a few tools, what the flow claims of each (read or not), and what the plugin is
told (declared read, declared write, or nothing). The flow is learned from sessions that walk the
tools in a chain, each call's argument taken from the previous result, so a served flow wants to
look the next link up after every call. The agent then walks the same chain through ADK's real
Runner, and every call stretto made (its own call ids) is checked against what it was told.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools import FunctionTool, ToolContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_support import ScriptedLlm, run_app, steps
from stretto_adk import StrettoPlugin
from stretto_core import Session, SessionHeader, ToolCall, ToolManifest, learn_flow
from stretto_core.sessions.model import LLMTurn, ToolResult, UserMessage

TOLD = ("read", "write", "nothing")


def chain_tool(name: str, ran: list[tuple[str, str]]) -> FunctionTool:
    def tool(key: str, tool_context: ToolContext) -> dict[str, Any]:
        ran.append((name, tool_context.function_call_id or ""))
        return {"key": key, "link": f"{name}-{key}"}

    tool.__name__ = name
    tool.__doc__ = f"Step {name} of the chain."
    return FunctionTool(tool)


def chain_session(order: list[str], start: str, flow_reads: list[str], n: int) -> Session:
    kinds = ToolManifest.declare("chain", reads=flow_reads, writes=[t for t in order if t not in flow_reads])
    events: list[Any] = [UserMessage(text=f"start from {start}")]
    key = start
    for i, name in enumerate(order):
        events.append(LLMTurn(calls=[ToolCall(call_id=f"c{i}", tool=name, arguments={"key": key})]))
        events.append(ToolResult(call_id=f"c{i}", tool=name, content=json.dumps({"key": key, "link": f"{name}-{key}"})))
        key = f"{name}-{key}"
    events.append(LLMTurn(text="done"))
    return Session(header=SessionHeader(session_id=f"chain-{n}", harness="test", manifest=kinds), events=events)


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    size = draw(st.integers(min_value=2, max_value=5))
    order = [f"t{i}" for i in draw(st.permutations(range(size)))]
    flow_says_read = draw(st.lists(st.booleans().map(lambda b: b or None), min_size=size, max_size=size))
    # the flow is adversarial: it marks most tools read, whatever they are
    flow_reads = [t for t, r in zip(order, flow_says_read) if r or draw(st.floats(0, 1)) < 0.7]
    told = dict(zip(order, draw(st.lists(st.sampled_from(TOLD), min_size=size, max_size=size))))
    walk = draw(st.integers(min_value=1, max_value=size))
    return {"order": order, "flow_reads": flow_reads, "told": told, "walk": walk}


STATS: Counter[str] = Counter()


def one_case(case: dict[str, Any]) -> None:
    order, told = case["order"], case["told"]
    flow = learn_flow([chain_session(order, f"U{n}", case["flow_reads"], n) for n in range(8)])
    ran: list[tuple[str, str]] = []
    key, script = "U99", []
    for name in order[:case["walk"]]:
        script.append([(name, {"key": key})])
        key = f"{name}-{key}"
    agent = LlmAgent(name="chain", model=ScriptedLlm(model="scripted", brain=steps(*script, "done")),
                     tools=[chain_tool(name, ran) for name in order])
    plugin = StrettoPlugin(flow=flow, reads=[t for t in order if told[t] == "read"],
                           writes=[t for t in order if told[t] == "write"], store=False)
    asyncio.run(run_app(agent, [plugin], ["start from U99"]))

    by_stretto = [name for name, call_id in ran if call_id.startswith("stretto-")]
    by_agent = [name for name, call_id in ran if not call_id.startswith("stretto-")]
    assert by_agent == [s[0][0] for s in script]
    for name in by_stretto:
        assert told[name] == "read", f"stretto called {name}, which it was told is {told[name]}"
    STATS["cases"] += 1
    STATS["with lookups"] += bool(by_stretto)


def test_stretto_never_calls_a_tool_that_is_not_a_known_read() -> None:
    STATS.clear()
    checked = settings(derandomize=True, max_examples=80, deadline=None, database=None,
                       suppress_health_check=[HealthCheck.too_slow])(given(cases())(one_case))
    checked()
    assert STATS["cases"] >= 80
    # the property was exercised: about 40% of the cases look something up
    assert STATS["with lookups"] >= STATS["cases"] // 5, STATS
