"""What the ADK adapter tests share: a scripted model, a toy shop, a flow learned from it, a runner.

The shop has two reads (`get_order`, `get_customer`) and a write (`refund`). Its flow is
learned from hand-written sessions in which the agent, after reading an order, always reads the
order's customer before refunding: so after `get_order` stretto looks up `get_customer` with the
order's `customer_id`.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncGenerator, Callable

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools import FunctionTool
from google.genai import types
from pydantic import Field

from stretto_core import Flow, Session, SessionHeader, ToolCall, ToolManifest, learn_flow
from stretto_core.sessions.model import LLMTurn, ToolResult, UserMessage

Calls = list[tuple[str, dict[str, Any]]]


@dataclass
class Reply:
    """One model turn to emit: calls (name, args) or, with none, the final text."""

    text: str = ""
    calls: Calls = field(default_factory=list)


class ScriptedLlm(BaseLlm):
    """A model with no network: `brain(llm_request) -> Reply` decides each turn.

    `requests` keeps every request (unless `keep_requests=False`), so a test can read exactly
    what the model was shown.
    """

    brain: Any = None
    requests: list[Any] = Field(default_factory=list)
    keep_requests: bool = True

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        if self.keep_requests:
            self.requests.append(llm_request.model_copy(deep=True))
        reply = self.brain(llm_request)
        parts = [types.Part(function_call=types.FunctionCall(name=n, args=a)) for n, a in reply.calls]
        if reply.text or not parts:
            parts.insert(0, types.Part(text=reply.text))
        yield LlmResponse(content=types.Content(role="model", parts=parts),
                          usage_metadata=types.GenerateContentResponseUsageMetadata(
                              prompt_token_count=10 * len(llm_request.contents), candidates_token_count=7))


def steps(*script: Any) -> Callable[[Any], Reply]:
    """A brain that plays a fixed script: each step is final text or a list of (tool, args)."""
    queue = list(script)

    def brain(_request: Any) -> Reply:
        step = queue.pop(0) if queue else "done"
        return Reply(text=step) if isinstance(step, str) else Reply(calls=list(step))

    return brain


def function_responses(request: Any) -> list[Any]:
    """Every `FunctionResponse` in a model request, oldest first."""
    return [p.function_response for c in request.contents for p in (c.parts or []) if p.function_response]


# -- the toy shop --------------------------------------------------------------------------------
ORDERS = {f"O{i}": {"order_id": f"O{i}", "customer_id": f"C{i}", "status": "delivered"} for i in range(1, 100)}
CUSTOMERS = {f"C{i}": {"customer_id": f"C{i}", "tier": "gold" if i % 2 else "silver"} for i in range(1, 100)}


@dataclass
class Shop:
    """The shop's tools as ADK FunctionTools, and a log of every call that really ran."""

    ran: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    text_results: bool = False
    customer: Callable[[str], Any] | None = None
    sync: bool = False
    confirm_customer: bool = False

    def tools(self) -> list[FunctionTool]:
        shop = self

        async def get_order(order_id: str) -> Any:
            """Read one order."""
            shop.ran.append(("get_order", {"order_id": order_id}))
            record = dict(ORDERS.get(order_id, {"error": "no such order"}))
            return json.dumps(record) if shop.text_results else record

        async def get_customer(customer_id: str) -> Any:
            """Read one customer."""
            shop.ran.append(("get_customer", {"customer_id": customer_id}))
            if shop.customer is not None:
                return await _maybe_await(shop.customer(customer_id))
            return dict(CUSTOMERS.get(customer_id, {"error": "no such customer"}))

        def get_customer_sync(customer_id: str) -> Any:
            """Read one customer."""
            shop.ran.append(("get_customer", {"customer_id": customer_id}))
            if shop.customer is not None:
                return shop.customer(customer_id)
            return dict(CUSTOMERS.get(customer_id, {"error": "no such customer"}))

        get_customer_sync.__name__ = "get_customer"

        async def refund(order_id: str) -> str:
            """Refund an order (a write)."""
            shop.ran.append(("refund", {"order_id": order_id}))
            return f"refunded {order_id}"

        customer = FunctionTool(get_customer_sync if shop.sync else get_customer,
                                require_confirmation=shop.confirm_customer)
        return [FunctionTool(get_order), customer, FunctionTool(refund)]

    def ran_tools(self) -> list[str]:
        return [name for name, _ in self.ran]


async def _maybe_await(value: Any) -> Any:
    return await value if asyncio.iscoroutine(value) else value


SHOP_READS = ["get_order", "get_customer"]


def shop_flow(refund_is_read: bool = False, sessions: int = 12) -> Flow:
    """The shop's flow; `refund_is_read` learns it with `refund` wrongly marked read and always
    refunded right after reading the order (a flow that looks refund up unless stopped)."""
    kinds = ToolManifest.declare("shop", reads=SHOP_READS + (["refund"] if refund_is_read else []),
                                 writes=[] if refund_is_read else ["refund"])
    made = []
    for i in range(1, sessions + 1):
        order, customer = ORDERS[f"O{i}"], CUSTOMERS[f"C{i}"]
        seq = [("get_customer", {"customer_id": order["customer_id"]}, customer),
               ("refund", {"order_id": order["order_id"]}, f"refunded {order['order_id']}")]
        if refund_is_read:
            seq = seq[1:]
        events: list[Any] = [UserMessage(text=f"please refund order {order['order_id']}")]
        calls = [("get_order", {"order_id": order["order_id"]}, order)] + seq
        for n, (tool, args, result) in enumerate(calls):
            events.append(LLMTurn(calls=[ToolCall(call_id=f"c{n}", tool=tool, arguments=args)]))
            events.append(ToolResult(call_id=f"c{n}", tool=tool,
                                     content=result if isinstance(result, str) else json.dumps(result)))
        events.append(LLMTurn(text="done"))
        made.append(Session(header=SessionHeader(session_id=f"shop-{i}", harness="test", manifest=kinds),
                            events=events))
    return learn_flow(made)


def shop_agent(shop: Shop, brain: Callable[[Any], Reply], keep_requests: bool = True,
               **agent_options: Any) -> LlmAgent:
    model = ScriptedLlm(model="scripted-shop", brain=brain, keep_requests=keep_requests)
    return LlmAgent(name="shop", model=model, tools=shop.tools(), **agent_options)


async def run_app(agent: LlmAgent, plugins: list[Any], messages: list[str], session_id: str = "s1",
                  close: bool = True) -> InMemoryRunner:
    """Run the agent once per user message in one ADK session, as an app would."""
    runner = InMemoryRunner(app=App(name="shop", root_agent=agent, plugins=plugins))
    await runner.session_service.create_session(app_name="shop", user_id="u", session_id=session_id)
    for text in messages:
        async for _ in runner.run_async(user_id="u", session_id=session_id,
                                        new_message=types.Content(role="user", parts=[types.Part(text=text)])):
            pass
    if close:
        await runner.close()
    return runner


def session_file(store: Path, session_id: str = "s1") -> Path:
    found = [p for p in store.glob("*.jsonl") if session_id in p.name]
    assert len(found) == 1, f"expected one session file for {session_id} in {store}: {sorted(store.iterdir())}"
    return found[0]
