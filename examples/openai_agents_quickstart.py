"""stretto on the OpenAI Agents SDK in one line: record, learn, serve. No API key, a few seconds.

    python examples/openai_agents_quickstart.py

A shop agent refunds orders. Before refunding it looks up the order and then the customer: two
reads, two model turns. stretto records a dozen conversations, learns from them that the
customer lookup always follows the order lookup, and from then on makes it itself, appending
the customer's record to the order's result. The agent reads it there and skips a turn.

The model is the SDK's own `ScriptedModel`, driven by a small rule that does what a model would:
it calls the next tool it still needs, unless a result it already received (appended lookups
included) answers it.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

from stretto_core import learn_flow, load_sessions
from stretto_openai_agents import instrument

set_tracing_disabled(True)


@function_tool
def get_order(order_id: str) -> str:
    """Look up an order."""
    return json.dumps({"order_id": order_id, "customer_id": "C" + order_id[1:], "status": "delivered"})


@function_tool
def get_customer(customer_id: str) -> str:
    """Look up a customer."""
    return json.dumps({"customer_id": customer_id, "tier": "gold" if int(customer_id[1:]) % 2 else "silver"})


@function_tool
def refund(order_id: str) -> str:
    """Refund an order."""
    return f"Order {order_id} refunded."


def shop_model(order_id: str) -> ScriptedModel:
    """The scripted brain: order, then customer, then refund, then a reply; skip what it has."""

    def next_step(call: Any) -> list[Any]:
        seen = "\n".join(i["output"] for i in call.input if isinstance(i, dict) and i.get("type") == "function_call_output")
        n = len(call.input)
        if '"status"' not in seen:
            return [function_call("get_order", {"order_id": order_id}, call_id=f"c{n}")]
        if '"tier"' not in seen:
            found = re.search(r'"customer_id": "(C\d+)"', seen)
            customer = found.group(1) if found else ""
            return [function_call("get_customer", {"customer_id": customer}, call_id=f"c{n}")]
        if "refunded" not in seen:
            return [function_call("refund", {"order_id": order_id}, call_id=f"c{n}")]
        return [assistant_message(f"Done: order {order_id} is refunded.")]

    return ScriptedModel([ModelStep.respond(next_step) for _ in range(8)])


def shop_agent(order_id: str) -> Agent[Any]:
    return Agent(name="shop", instructions="Refund orders.", model=shop_model(order_id),
                 tools=[get_order, get_customer, refund])


async def conversation(agent: Agent[Any], order_id: str) -> int:
    """One customer; the model turns it took."""
    result = await Runner.run(agent, f"Please refund my order {order_id}.")
    return len(result.raw_responses)


async def main() -> None:
    store = Path(tempfile.mkdtemp(prefix="stretto-quickstart-"))
    reads, writes = ["get_order", "get_customer"], ["refund"]

    # 1. Record: with no flow, stretto only records the sessions (to .stretto/sessions by default).
    for n in range(12):
        agent = instrument(shop_agent(f"O{100 + n}"), reads=reads, writes=writes, store=store / "train")
        await conversation(agent, f"O{100 + n}")

    # 2. Learn a flow from them (in production: `stretto learn .stretto/sessions`).
    flow = learn_flow(load_sessions(store / "train"))

    # 3. Serve: the one line.
    without = with_stretto = 0
    for n in range(5):
        order = f"O{500 + n}"
        without += await conversation(shop_agent(order), order)
        agent = instrument(shop_agent(order), flow=flow, reads=reads, writes=writes, store=store / "served")
        with_stretto += await conversation(agent, order)

    print("agent = instrument(agent, flow=flow, reads=['get_order', 'get_customer'], writes=['refund'])")
    print(f"LLM turns over 5 new customers: {without} without stretto -> {with_stretto} with it")
    print(f"sessions recorded in {store}")


if __name__ == "__main__":
    asyncio.run(main())
