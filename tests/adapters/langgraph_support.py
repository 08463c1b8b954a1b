"""A toy shop for the LangGraph adapter's tests (a scripted chat model, tools, a learned flow), and
the harness that runs recorded τ² episodes through a real agent.

`get_order` and `get_customer` are reads, `refund` is a write, `audit` is a read no authority
declares. The flow is learned from sessions in which the agent reads an order, then its
customer, then audits the customer and refunds the order; the "reckless" flow was learned with
every tool marked read, so it would look up the write and the undeclared tool if let.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, ToolException
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import Command
from pydantic import Field

from stretto_core import Flow, Session, ToolCall, ToolManifest, read_session
from stretto_core.sessions.flusher import FLUSHER
from stretto_core.flow.ir import learn
from stretto_core.sessions.model import LLMTurn, SessionHeader, ToolResult, UserMessage
from stretto_langgraph import StrettoMiddleware, StrettoToolWrapper
from stretto_langgraph.messages import content_text

ORDERS = {"O1": "C7", "O2": "C8", "O3": "C9", "O4": "C10"}
READS = ["get_order", "get_customer"]
WRITES = ["refund"]


# -- the model ------------------------------------------------------------------------------------
Step = AIMessage | Callable[[list[BaseMessage]], AIMessage]


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script and keeps every list of messages it was shown.

    Each step is an AIMessage, or a function of the messages that returns one. `bind_tools`
    returns the model itself (LangChain's own fakes raise there, so `create_agent` cannot use them).
    """

    steps: list[Any] = Field(default_factory=list)
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> "ScriptedChatModel":
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        step = self.steps.pop(0) if self.steps else AIMessage("(the script has ended)")
        message = step(list(messages)) if callable(step) else step.model_copy()
        return ChatResult(generations=[ChatGeneration(message=message)])


def usage(n_in: int, n_out: int) -> dict[str, int]:
    return {"input_tokens": n_in, "output_tokens": n_out, "total_tokens": n_in + n_out}


def calls(*pairs: tuple[str, dict[str, Any]], prefix: str = "call") -> AIMessage:
    """A model turn that calls the given tools (ids call_1, call_2, ...)."""
    tool_calls = [{"name": name, "args": args, "id": f"{prefix}_{i}", "type": "tool_call"}
                  for i, (name, args) in enumerate(pairs, start=1)]
    return AIMessage("", tool_calls=tool_calls, usage_metadata=usage(100, 10))


def reply(text: str = "done") -> AIMessage:
    return AIMessage(text, usage_metadata=usage(150, 5))


def order_then_reply(order_id: str = "O1") -> list[Any]:
    return [calls(("get_order", {"order_id": order_id})), reply()]


# -- the tools ------------------------------------------------------------------------------------
class Unprintable:
    """A tool return no one can turn into text."""

    def __str__(self) -> str:
        raise ValueError("cannot be shown")

    __repr__ = __str__


class Shop:
    """The toy tools, with a log of every call made, and a customer lookup that can misbehave."""

    def __init__(self, customer: str = "ok", metadata: bool = False, blocks: bool = False,
                 order_command: bool = False, order_delay: dict[str, float] | None = None) -> None:
        self.customer = customer  # ok | slow | raise | hang | garbage
        self.blocks = blocks  # get_order answers with a list of content blocks
        self.order_command = order_command  # get_order answers with a Command
        self.order_delay = order_delay or {}  # seconds get_order takes, by order
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.release = threading.Event()
        self.finished = False  # a hung lookup has come back
        self.tools = self._build(metadata)

    def _log(self, name: str, **args: Any) -> None:
        self.calls.append((name, args))

    def called(self, name: str) -> list[dict[str, Any]]:
        return [args for tool, args in self.calls if tool == name]

    def _build(self, metadata: bool) -> list[BaseTool]:
        def get_order(order_id: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
            """Look up an order."""
            self._log("get_order", order_id=order_id)
            time.sleep(self.order_delay.get(order_id, 0.0))
            text = json.dumps({"order_id": order_id, "customer_id": ORDERS.get(order_id, "C0"),
                               "status": "delivered"})
            if self.order_command:
                return Command(update={"messages": [ToolMessage("order noted", tool_call_id=tool_call_id)]})
            return [{"type": "text", "text": text}] if self.blocks else text

        def get_customer(customer_id: str) -> Any:
            """Look up a customer."""
            self._log("get_customer", customer_id=customer_id)
            if self.customer == "raise":
                raise RuntimeError("the customer service is down")
            if self.customer == "hang":
                self.release.wait(20)
                self.finished = True
            if self.customer == "garbage":
                return Unprintable()
            if self.customer == "slow":
                time.sleep(0.05)
            return json.dumps({"customer_id": customer_id, "tier": "gold"})

        async def aget_customer(customer_id: str) -> Any:
            """Look up a customer."""
            if self.customer == "hang":  # cancellable, so an abandoned lookup leaves no thread behind
                self._log("get_customer", customer_id=customer_id)
                await asyncio.sleep(20)
                return "too late"
            if self.customer == "slow":  # slow enough that parallel results wait for each other
                await asyncio.sleep(0.05)
                self._log("get_customer", customer_id=customer_id)
                return json.dumps({"customer_id": customer_id, "tier": "gold"})
            return get_customer(customer_id)

        def refund(order_id: str) -> str:
            """Refund an order."""
            self._log("refund", order_id=order_id)
            return "refunded"

        def audit(customer_id: str) -> str:
            """Audit a customer's account."""
            self._log("audit", customer_id=customer_id)
            return json.dumps({"customer_id": customer_id, "flags": []})

        tools = [StructuredTool.from_function(get_order),
                 StructuredTool.from_function(func=get_customer, coroutine=aget_customer),
                 StructuredTool.from_function(refund), StructuredTool.from_function(audit)]
        if metadata:
            kinds = {"get_order": True, "get_customer": True, "refund": False}
            for t in tools:
                if t.name in kinds:
                    t.metadata = {"readOnlyHint": kinds[t.name]}
        return tools


# -- the flow -------------------------------------------------------------------------------------
def _training_session(i: int, order_id: str, customer_id: str) -> Session:
    order = json.dumps({"order_id": order_id, "customer_id": customer_id, "status": "delivered"})
    customer = json.dumps({"customer_id": customer_id, "tier": "gold"})
    audit = json.dumps({"customer_id": customer_id, "flags": []})
    steps = [("get_order", {"order_id": order_id}, order), ("get_customer", {"customer_id": customer_id}, customer),
             ("audit", {"customer_id": customer_id}, audit), ("refund", {"order_id": order_id}, "refunded")]
    events: list[Any] = [UserMessage(text=f"please refund order {order_id}")]
    for n, (tool, args, content) in enumerate(steps):
        events.append(LLMTurn(calls=[ToolCall(call_id=f"t{n}", tool=tool, arguments=args)]))
        events.append(ToolResult(call_id=f"t{n}", tool=tool, content=content, parsed=json.loads(content)
                                 if content.startswith("{") else None))
    events.append(LLMTurn(text="refunded"))
    return Session(header=SessionHeader(session_id=f"train-{i}", harness="toy"), events=events)


def toy_flow(reckless: bool = False) -> Flow:
    """The shop's flow; `reckless` was learned believing every tool, refund included, a read."""
    manifest = (ToolManifest.declare(reads=["get_order", "get_customer", "audit", "refund"]) if reckless
                else ToolManifest.declare(reads=["get_order", "get_customer", "audit"], writes=["refund"]))
    return learn([_training_session(i, f"X{i}", f"K{i * 7}") for i in range(10)], manifest)


# -- running ----------------------------------------------------------------------------------------
def run_agent(model: BaseChatModel, tools: Sequence[BaseTool], middleware: Sequence[Any], mode: str,
              text: str = "please refund order O1", config: dict[str, Any] | None = None,
              **kwargs: Any) -> list[BaseMessage]:
    """One run of a real `create_agent`, by `invoke` (mode sync) or `ainvoke` (mode async)."""
    agent = create_agent(model, list(tools), middleware=list(middleware), **kwargs)
    return invoke(agent, text, mode, config)


def invoke(graph: Any, text: str, mode: str, config: dict[str, Any] | None = None) -> list[BaseMessage]:
    state = {"messages": [HumanMessage(text)]}
    if mode == "sync":
        return graph.invoke(state, config)["messages"]
    return asyncio.run(graph.ainvoke(state, config))["messages"]


def plain_graph(model: BaseChatModel, tool_node: Any, checkpointer: Any = None) -> Any:
    """A hand-built ReAct graph: a model node, the given tool node, `tools_condition`."""

    def model_node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    async def amodel_node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", RunnableLambda(model_node, afunc=amodel_node))
    builder.add_node("tools", tool_node)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=checkpointer)


def tool_messages(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def session_files(store: Path) -> list[Session]:
    """Every session recorded in a store, read back with the core's reader. A graph server keeps
    its threads' sessions open, whose events reach the disk within the recorder's `flush_ms`: a
    test reading at once first has every live recorder write what waits."""
    FLUSHER.flush_all()
    return [read_session(p) for p in sorted(store.glob("*.jsonl"))]


# -- one run through either front ---------------------------------------------------------------------
FRONTS = ("agent", "graph")
MODES = ("sync", "async")


def serve_once(front: str, mode: str, shop: Shop, steps: list[Any], store: Path | bool, flow: Flow | None,
               text: str = "please refund order O1", config: dict[str, Any] | None = None,
               checkpointer: Any = None, **options: Any) -> tuple[list[BaseMessage], ScriptedChatModel, Any]:
    """Run the toy shop once through `create_agent` + StrettoMiddleware (front "agent") or a plain
    StateGraph + ToolNode(wrap_tool_call=StrettoToolWrapper) (front "graph")."""
    model = ScriptedChatModel(steps=list(steps))
    if front == "agent":
        server: Any = StrettoMiddleware(flow, store=store, **options)
        agent = create_agent(model, shop.tools, middleware=[server], checkpointer=checkpointer)
    else:
        server = StrettoToolWrapper(flow, store=store, **options)
        agent = plain_graph(model, server.tool_node(shop.tools), checkpointer)
    return invoke(agent, text, mode, config), model, server


# -- recorded τ² episodes through a real agent (the end-to-end test and benchmark) --------------------
# A `create_agent` runs with a chat model whose turns come from the kit's `EpisodePlayer`, and with the
# episode's real τ²-bench environment behind `StructuredTool`s (input schema: the environment's JSON
# schema; kind: `metadata`, as MCP annotations would put it). Each user message is one run on the
# episode's thread, so the session spans them all. Needs the benchmark environments.
class PlayerChatModel(BaseChatModel):
    """A chat model that says what an `EpisodePlayer` says, given the results it was shown."""

    player: Any
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "episode-player"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> "PlayerChatModel":
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.calls += 1
        turn = self.player.next_turn(_new_tool_outputs(messages))
        tool_calls = [{"name": c.tool, "args": dict(c.arguments), "id": c.call_id, "type": "tool_call"}
                      for c in turn.calls]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(turn.text, tool_calls=tool_calls))])


def _new_tool_outputs(messages: Sequence[BaseMessage]) -> list[str]:
    """The texts of the tool results after the model's previous turn, in the order of its calls."""
    outputs: list[str] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        outputs.append(content_text(message.content))
    return outputs[::-1]


def environment_tools(toolset: Any) -> list[StructuredTool]:
    """The toolset's tools as LangChain tools: JSON-schema input, kind in metadata, errors as errors."""
    tools = []
    for info in toolset.tools:
        def run(_name: str = info.name, **arguments: Any) -> str:
            text, error = toolset.call(_name, arguments)
            if error:
                raise ToolException(text)
            return text

        async def arun(_name: str = info.name, **arguments: Any) -> str:
            text, error = await toolset.acall(_name, arguments)
            if error:
                raise ToolException(text)
            return text

        tools.append(StructuredTool(name=info.name, description=info.description or info.name,
                                    args_schema=info.parameters, func=run, coroutine=arun,
                                    handle_tool_error=True, metadata={"readOnlyHint": info.read_only}))
    return tools


@dataclass(frozen=True)
class EpisodeRun:
    """What one episode did through the agent: model turns made and recorded, lookups made."""

    session_id: str
    llm_turns: int
    recorded_turns: int
    saved_turns: int
    model_calls: int
    lookups: int


def run_episode(session: Session, flow: Flow | None, *, mode: str = "async", store: Path | bool = False,
                **options: Any) -> EpisodeRun:
    """Play one recorded episode through `create_agent`, served by `flow` (None: no middleware)."""
    from stretto_core.evaluate.scripted import EpisodePlayer, Tau2Toolset  # the environments load here

    player = EpisodePlayer(session)
    model = PlayerChatModel(player=player)
    middleware = [] if flow is None else [StrettoMiddleware(flow, store=store, **options)]
    agent = create_agent(model, environment_tools(Tau2Toolset(session)), middleware=middleware,
                         checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": session.header.session_id}, "recursion_limit": 500}
    for segment in player.segments():
        state = {"messages": [HumanMessage(segment.user_text)]}
        if mode == "sync":
            agent.invoke(state, config)
        else:
            asyncio.run(agent.ainvoke(state, config))
    lookups = 0
    if middleware:
        live = middleware[0].live_session(session.header.session_id)
        lookups = len(live.lookups) if live is not None else 0
        middleware[0].close()
    return EpisodeRun(session.header.session_id, player.llm_turns, player.recorded_turns, player.saved_turns,
                      model.calls, lookups)
