"""A small shop and its tools: the embedded default data of `stretto demo`.

The shop is a dictionary of customers, orders and products, drawn from a seed; four tools read
it and one (cancelling an order) writes. It exists so that the whole pipeline (record, learn,
serve, replay) runs on a fresh machine with no data, no server and no key; the agent that serves
its customers is in `demo/agent.py`, and the speculator learns from its sessions exactly as from
any other.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from stretto_core.sessions.manifest import ToolManifest

SHOP_APP = "demo/shop"
SHOP_SEED = 7
"""Every customer is served on a fresh copy of the same shop, drawn from this seed."""

SHOP_MANIFEST = ToolManifest.declare(
    SHOP_APP,
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
        """The id of the customer with this email."""
        for u in self.users.values():
            if u["email"] == email:
                return u["user_id"]
        raise KeyError("user not found")

    def _get_user_details(self, user_id: str) -> dict[str, Any]:
        """A customer's name, email and orders."""
        return self.users[user_id]

    def _get_order_details(self, order_id: str) -> dict[str, Any]:
        """An order's status and items."""
        return self.orders[order_id]

    def _get_product_details(self, product_id: str) -> dict[str, Any]:
        """A product's name and whether it is in stock."""
        return {"product_id": product_id, "name": PRODUCTS[product_id], "in_stock": product_id[-1] in "02468"}

    def _cancel_pending_order(self, order_id: str, reason: str) -> dict[str, Any]:
        """Cancel an order that is still pending."""
        order = self.orders[order_id]
        if order["status"] != "pending":
            raise KeyError("non-pending order cannot be cancelled")
        order["status"] = "cancelled"
        return order


def _render(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
