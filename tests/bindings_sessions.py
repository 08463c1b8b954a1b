"""Hand-built sessions for the binding tests: a small shop, an airline and a travel listing."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage
from stretto_core.sessions.state import ToolState

SHOP = ToolManifest.declare(
    "shop",
    reads=["find_user_id_by_email", "get_user_details", "get_order_details", "get_product_details",
           "list_all_product_types", "search_orders", "list_blocks", "get_block"],
    writes=["cancel_pending_order"],
)
AIRLINE = ToolManifest.declare("airline", reads=["get_reservation_details", "get_flight_status"],
                               writes=["cancel_reservation"])
TRAVEL = ToolManifest.declare("travel", reads=["get_all_hotels_in_city", "get_hotels_prices"],
                              writes=["reserve_hotel"])


def text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result)


@dataclass
class Script:
    """Builds a session event by event: `user`, `call` (one call a turn), `batch` (parallel calls)."""

    name: str = "s"
    events: list[Any] = field(default_factory=list)
    n: int = 0

    def user(self, words: str) -> "Script":
        self.events.append(UserMessage(text=words))
        return self

    def call(self, tool: str, arguments: dict[str, Any], result: Any, error: bool = False) -> "Script":
        return self.batch([(tool, arguments, result, error)])

    def batch(self, calls: list[tuple]) -> "Script":
        made = []
        for tool, arguments, result, *rest in calls:
            self.n += 1
            made.append((ToolCall(call_id=f"c{self.n}", tool=tool, arguments=arguments), result,
                         bool(rest and rest[0])))
        self.events.append(LLMTurn(calls=[c for c, _, _ in made]))
        for c, result, error in made:
            self.events.append(ToolResult(call_id=c.call_id, tool=c.tool, content=text(result), error=error))
        return self

    def reply(self, words: str = "done") -> "Script":
        self.events.append(LLMTurn(text=words))
        return self

    def session(self) -> Session:
        return Session(header=SessionHeader(session_id=self.name, harness="test"), events=list(self.events))

    def state(self, manifest: ToolManifest) -> ToolState:
        """The tool state after every event so far, as a serving engine would have it."""
        st = ToolState(manifest)
        for e in self.events:
            if isinstance(e, UserMessage):
                st.observe_user(e.text)
            elif isinstance(e, LLMTurn):
                for c in e.calls:
                    st.observe_call(c.call_id, c.tool, c.arguments)
            elif isinstance(e, ToolResult):
                st.observe_result(e.call_id, e.tool, e.content, e.parsed, e.error)
        return st


def user_record(user: str, orders: list[str]) -> dict[str, Any]:
    return {"user_id": user, "name": {"first_name": "Ann", "last_name": "Lee"},
            "address": {"zip": "85034", "city": "Phoenix"}, "orders": orders}


def order_record(order: str, user: str, items: list[tuple[str, str]], status: str = "pending",
                 tracking: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"order_id": order, "user_id": user, "status": status,
                           "items": [{"name": name, "product_id": pid, "price": 10.5} for name, pid in items]}
    if tracking:
        out["fulfillments"] = [{"tracking_id": [tracking]}]
    return out


def walk_orders(name: str, user: str, orders: list[str], email: str | None = None) -> Script:
    """The retail habit: find the user, read them, read each order in turn."""
    email = email or f"{user}@example.com"
    s = Script(name).user(f"hi, my email is {email}")
    s.call("find_user_id_by_email", {"email": email}, user)
    s.call("get_user_details", {"user_id": user}, user_record(user, orders))
    for order in orders:
        s.call("get_order_details", {"order_id": order}, order_record(order, user, [("Lamp", "100" + order[-1])]))
    return s.reply()


def observe_event(state: ToolState, event: Any) -> None:
    """Feed one recorded event to a state, as learning does (a user message, the agent's calls, a result)."""
    if isinstance(event, UserMessage):
        state.observe_user_message(event)
    elif isinstance(event, LLMTurn):
        for call in event.calls:
            state.observe_call(call.call_id, call.tool, call.arguments)
    elif isinstance(event, ToolResult):
        state.observe_result(event.call_id, event.tool, event.content, event.parsed, event.error)
