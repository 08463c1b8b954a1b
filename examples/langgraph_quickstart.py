"""stretto in a LangChain agent, in three steps: record sessions, learn a flow, serve it.

    python examples/langgraph_quickstart.py

No API key: the agent's model is scripted (it reads an order, then the order's customer, then
refunds, and never repeats a read whose result it already has). Its tools are toy functions.
Step 1 records five conversations with `StrettoMiddleware` and no flow; step 2 learns a flow
from them; step 3 runs five new conversations without and with
`create_agent(..., middleware=[StrettoMiddleware(flow=..., reads=[...])])` and counts the
model's turns. stretto looks the customer up as soon as the order names it and appends the
result inside the order's tool result, so the model never spends a turn asking for it.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from stretto_core import learn_flow, load_sessions, save_flow
from stretto_langgraph import StrettoMiddleware

READS, WRITES = ["get_order", "get_customer"], ["refund"]


@tool
def get_order(order_id: str) -> str:
    """Look up an order: its status and the customer who placed it."""
    return json.dumps({"order_id": order_id, "customer_id": "C" + order_id[1:], "status": "delivered"})


@tool
def get_customer(customer_id: str) -> str:
    """Look up a customer: name and loyalty tier."""
    return json.dumps({"customer_id": customer_id, "name": f"Customer {customer_id}", "tier": "gold"})


@tool
def refund(order_id: str) -> str:
    """Refund a delivered order."""
    return json.dumps({"order_id": order_id, "refunded": True})


class ShopAgent(BaseChatModel):
    """A scripted support agent: order, then customer, then refund, then a reply to the user."""

    turns: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted-shop-agent"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ShopAgent":
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.turns += 1
        start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        order_id = messages[start].content.split()[-1]
        seen = "\n".join(m.content for m in messages[start:] if isinstance(m, ToolMessage))
        customer_id = "C" + order_id[1:]
        if f'"order_id": "{order_id}", "customer_id"' not in seen:
            step = ("get_order", {"order_id": order_id})
        elif f'"customer_id": "{customer_id}", "name"' not in seen:  # not known yet: ask for it
            step = ("get_customer", {"customer_id": customer_id})
        elif '"refunded": true' not in seen:
            step = ("refund", {"order_id": order_id})
        else:
            return _say(f"Order {order_id} is refunded.")
        call = {"name": step[0], "args": step[1], "id": f"call_{self.turns}", "type": "tool_call"}
        return _say("", [call])


def _say(text: str, calls: list[dict[str, Any]] | None = None) -> ChatResult:
    usage = {"input_tokens": 200, "output_tokens": 20, "total_tokens": 220}
    return ChatResult(generations=[ChatGeneration(message=AIMessage(text, tool_calls=calls or [],
                                                                    usage_metadata=usage))])


def conversations(middleware: list[Any], orders: list[str]) -> tuple[int, list[BaseMessage]]:
    """Run one conversation per order; the model's turns in all, and the last conversation."""
    model = ShopAgent()
    agent = create_agent(model, [get_order, get_customer, refund], middleware=middleware)
    last: list[BaseMessage] = []
    for order in orders:
        last = agent.invoke({"messages": [HumanMessage(f"Please refund order {order}")]})["messages"]
    return model.turns, last


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="stretto-quickstart-"))
    sessions, flow_file = folder / "sessions", folder / "shop.flow.json"

    # 1. Record: with no flow, the middleware only records (user words, turns with usage, results).
    recorder = StrettoMiddleware(reads=READS, writes=WRITES, store=sessions)
    recorded, _ = conversations([recorder], ["O1", "O2", "O3", "O4", "O5"])
    print(f"1. recorded 5 conversations ({recorded} model turns) in {sessions}")

    # 2. Learn: count which reads follow which results, and where their arguments come from.
    save_flow(learn_flow(load_sessions(sessions)), flow_file)
    print(f"2. learned {flow_file.name} from them")

    # 3. Serve: the same agent on new orders, without and with the flow.
    new_orders = ["O6", "O7", "O8", "O9", "O10"]
    without, _ = conversations([], new_orders)
    served = StrettoMiddleware(flow=str(flow_file), reads=READS, writes=WRITES, store=sessions)
    with_stretto, last = conversations([served], new_orders)
    print(f"3. model turns on 5 new orders: {without} without stretto -> {with_stretto} with it")
    order_result = next(m for m in last if isinstance(m, ToolMessage) and m.name == "get_order")
    print("\nwhat the model received for get_order(O10):\n" + order_result.content)


if __name__ == "__main__":
    main()
