"""A small shop, its tools, and a scripted support agent: the embedded default for `stretto demo`.

Nothing here is a model. The shop is a dictionary of customers, orders and products; the agent
follows the routine a support agent follows (identify the customer, read their details, walk
their orders until it finds the one the customer describes, cancel it after confirmation), with
seeded randomness in which customer, which order, and how it phrases things. It exists so that
the whole pipeline (record, learn, serve, replay) runs on a fresh machine with no data, no
server and no key; the speculator learns from these sessions exactly as from any other.

The agent reads what a lookup already appended to a result, as an LLM agent does, and skips
the calls it answers: that is how `stretto demo` measures live savings.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Callable

from stretto_core.sessions.manifest import ToolManifest

SHOP_MANIFEST = ToolManifest.declare(
    "demo/shop",
    reads=["find_user_id_by_email", "get_user_details", "get_order_details", "get_product_details"],
    writes=["cancel_pending_order"],
)

STATUSES = ["pending", "delivered", "processed"]
PRODUCTS = {f"P{i:03d}": name for i, name in enumerate(
    ["desk lamp", "office chair", "water bottle", "backpack", "headphones", "notebook", "kettle", "yoga mat"])}


@dataclass
class Shop:
    """Customers, orders and products; cancelling an order is the one write."""

    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def generate(cls, rng: random.Random, customers: int = 40) -> "Shop":
        shop = cls()
        for u in range(customers):
            user_id = f"user_{u:03d}"
            order_ids = []
            for _ in range(rng.randint(1, 4)):
                order_id = f"#W{rng.randint(1000000, 9999999)}"
                items = rng.sample(sorted(PRODUCTS), rng.randint(1, 3))
                shop.orders[order_id] = {"order_id": order_id, "user_id": user_id,
                                         "status": rng.choice(STATUSES),
                                         "items": [{"product_id": p, "name": PRODUCTS[p]} for p in items]}
                order_ids.append(order_id)
            shop.users[user_id] = {"user_id": user_id, "email": f"customer{u}@example.com",
                                   "name": f"Customer {u}", "orders": order_ids}
        return shop

    def call(self, tool: str, args: dict[str, Any]) -> tuple[str, bool]:
        """Run one tool; results are JSON text, errors `Error: …` as an agent would see them."""
        try:
            return _render(getattr(self, f"_{tool}")(**args)), False
        except (KeyError, TypeError, AttributeError) as exc:
            return f"Error: {exc}", True

    def _find_user_id_by_email(self, email: str) -> str:
        for u in self.users.values():
            if u["email"] == email:
                return u["user_id"]
        raise KeyError("user not found")

    def _get_user_details(self, user_id: str) -> dict[str, Any]:
        return self.users[user_id]

    def _get_order_details(self, order_id: str) -> dict[str, Any]:
        return self.orders[order_id]

    def _get_product_details(self, product_id: str) -> dict[str, Any]:
        return {"product_id": product_id, "name": PRODUCTS[product_id], "in_stock": product_id[-1] in "02468"}

    def _cancel_pending_order(self, order_id: str, reason: str) -> dict[str, Any]:
        order = self.orders[order_id]
        if order["status"] != "pending":
            raise KeyError("non-pending order cannot be cancelled")
        order["status"] = "cancelled"
        return order


def _render(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def call_key_text(tool: str, args: dict[str, Any]) -> str:
    return tool + " " + json.dumps(args, sort_keys=True)


Turn = Callable[[str, list[tuple[str, dict[str, Any]]]], list[str]]


def run_agent(shop: Shop, rng: random.Random, respond: Callable[[str], str], turn: Turn,
              seen: dict[str, str]) -> None:
    """One support episode. `turn(text, calls)` is one LLM turn: the harness runs the calls and
    returns their results; `respond(text)` is the customer. `seen` holds every result the agent
    has in its context by call (the harness adds appended lookups there): the agent reads them
    and does not ask again for a call whose result it already holds.
    """
    user = shop.users[rng.choice(sorted(shop.users))]
    pending = [o for o in user["orders"] if shop.orders[o]["status"] == "pending"]
    target = rng.choice(pending) if pending else rng.choice(user["orders"])
    item = shop.orders[target]["items"][0]["name"]
    respond(f"Hi, I want to cancel my order with the {item}.")
    turn("Sure. What is your email address?", [])
    email = respond(f"It is {user['email']}.").split()[-1].rstrip(".")

    def read(tool: str, **args: Any) -> str:
        key = call_key_text(tool, args)
        if key not in seen:
            seen[key] = turn("", [(tool, args)])[0]
        return seen[key]

    user_id = read("find_user_id_by_email", email=email)
    details = json.loads(read("get_user_details", user_id=user_id))
    found = None
    for order_id in details["orders"]:
        order = json.loads(read("get_order_details", order_id=order_id))
        if rng.random() < 0.3:
            read("get_product_details", product_id=order["items"][0]["product_id"])
        if any(i["name"] == item for i in order["items"]):
            found = order
            break
    if found is None or found["status"] != "pending":
        turn(f"I'm sorry, that order is {found['status'] if found else 'not found'} and cannot be cancelled.", [])
        respond("Oh well, thanks.")
        return
    turn(f"I found order {found['order_id']} with the {item}. Shall I cancel it?", [])
    respond("Yes please.")
    turn("", [("cancel_pending_order", {"order_id": found["order_id"], "reason": "no longer needed"})])
    turn("Your order is cancelled. Anything else?", [])
    respond("No, thanks.")
