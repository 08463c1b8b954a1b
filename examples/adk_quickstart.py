"""stretto with Google ADK in one line, with no API key: record sessions, learn a flow, serve it.

A toy shop agent refunds orders. Its model is scripted (it reads what ADK shows it and calls
the next tool it still needs), so this runs offline in a few seconds:

1. record a few sessions with StrettoPlugin and no flow (it only records),
2. learn a flow from them (`learn_flow`, pure counting),
3. run new requests without and with `App(..., plugins=[StrettoPlugin(flow=..., reads=[...])])`
   and print the LLM turns: after reading an order, stretto looks its customer up itself, so
   the model no longer spends a turn asking for it.

    pip install "stretto[adk]" && python examples/adk_quickstart.py
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from typing import AsyncGenerator, Callable

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

from stretto_adk import StrettoPlugin
from stretto_core import learn_flow, load_sessions

READS = ["get_order", "get_customer"]

ORDERS = {f"O{i}": {"order_id": f"O{i}", "customer_id": f"C{i}", "total": 10 * i} for i in range(1, 20)}
CUSTOMERS = {f"C{i}": {"customer_id": f"C{i}", "tier": "gold" if i % 2 else "silver"} for i in range(1, 20)}


def get_order(order_id: str) -> dict:
    """Read one order."""
    return ORDERS[order_id]


def get_customer(customer_id: str) -> dict:
    """Read one customer: the refund policy depends on the tier."""
    return CUSTOMERS[customer_id]


def refund(order_id: str, amount: int) -> str:
    """Refund an order (a write)."""
    return f"refunded {amount} on {order_id}"


class ShopModel(BaseLlm):
    """A scripted model: reads the conversation and asks for the next thing it lacks."""

    turns: int = 0

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        self.turns += 1
        got = {p.function_response.name: p.function_response.response
               for c in llm_request.contents for p in c.parts or [] if p.function_response}
        looked_up = " ".join(str(r.get("stretto_lookups", "")) for r in got.values())  # what stretto added
        order = ORDERS[llm_request.contents[0].parts[0].text.split()[-1]]
        if "get_order" not in got:
            call = ("get_order", {"order_id": order["order_id"]})
        elif "get_customer" not in got and "get_customer" not in looked_up:
            call = ("get_customer", {"customer_id": order["customer_id"]})
        elif "refund" not in got:
            call = ("refund", {"order_id": order["order_id"], "amount": order["total"]})
        else:
            call = None
        part = (types.Part(function_call=types.FunctionCall(name=call[0], args=call[1])) if call
                else types.Part(text=f"Done: order {order['order_id']} is refunded."))
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


async def run(requests: list[str], make_app: Callable[[LlmAgent], App]) -> int:
    """Each request in its own ADK session of the app; the model's turns in all."""
    model = ShopModel(model="scripted-shop")
    runner = InMemoryRunner(app=make_app(LlmAgent(name="shop", model=model, tools=[get_order, get_customer, refund])))
    for n, text in enumerate(requests):
        session = await runner.session_service.create_session(app_name="shop", user_id="u", session_id=f"s{n}")
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
    await runner.close()
    return model.turns


def main() -> None:
    logging.getLogger("google_adk").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as store:
        # 1. record: with no flow the plugin only records (the declared kinds make the sessions learnable)
        asyncio.run(run([f"please refund order O{i}" for i in range(1, 11)], lambda agent: App(
            name="shop", root_agent=agent, plugins=[StrettoPlugin(reads=READS, writes=["refund"], store=store)])))
        # 2. learn: count what the agent did after each result
        flow = learn_flow(load_sessions(store))
        # 3. serve the flow on new requests, and compare with the same app without it
        requests = [f"please refund order O{i}" for i in range(11, 16)]
        without = asyncio.run(run(requests, lambda agent: App(name="shop", root_agent=agent)))
        with_stretto = asyncio.run(run(requests, lambda agent: App(
            name="shop", root_agent=agent, plugins=[StrettoPlugin(flow=flow, reads=READS, store=store)])))
    print(f"{len(requests)} requests, LLM turns without -> with stretto: {without} -> {with_stretto}")


if __name__ == "__main__":
    main()
