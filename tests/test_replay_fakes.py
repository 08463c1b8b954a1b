"""Hand-built pieces for the replay tests: a shop's sessions, a flow that reads a table, a shop.

`Shop` is a tiny environment: users own orders, reads return JSON, `cancel_order` writes. `Script`
writes a session line by line, and `Script.play(shop)` fills in each result from the shop, so a
recording and the environment agree. `TableFlow` is a FlowModel whose reach is a table by the
last step's tool, and whose bindings take one value from the newest result holding it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, Usage, UserMessage
from stretto_core.sessions.state import ToolState

MANIFEST = ToolManifest.declare("shop", reads=["find_user", "get_user", "get_order", "get_product", "check_phone"],
                                writes=["cancel_order", "toggle_phone"], generic=["think"])


class Shop:
    """Users with orders; orders can be cancelled; the customer's phone can be toggled."""

    def __init__(self) -> None:
        self.users = {"u1": {"user_id": "u1", "email": "ann@x.org", "orders": ["o1", "o2"]}}
        self.orders = {"o1": {"order_id": "o1", "status": "pending", "item": "lamp"},
                       "o2": {"order_id": "o2", "status": "delivered", "item": "desk"}}
        self.phone_on = False
        self.calls: list[tuple[str, dict[str, Any], str]] = []

    def call(self, tool: str, arguments: dict[str, Any], requestor: str = "agent") -> tuple[str, bool]:
        self.calls.append((tool, dict(arguments), requestor))
        if tool == "find_user":
            for user in self.users.values():
                if user["email"] == arguments.get("email"):
                    return user["user_id"], False
            return "Error: user not found", True
        if tool == "get_user":
            user = self.users.get(arguments.get("user_id", ""))
            return (json.dumps(user), False) if user else ("Error: user not found", True)
        if tool == "get_order":
            order = self.orders.get(arguments.get("order_id", ""))
            return (json.dumps(order), False) if order else ("Error: order not found", True)
        if tool == "get_product":
            return json.dumps({"product": arguments.get("product"), "in_stock": True}), False
        if tool == "cancel_order":
            order = self.orders[arguments["order_id"]]
            order["status"] = "cancelled"
            return json.dumps(order), False
        if tool == "toggle_phone":
            self.phone_on = not self.phone_on
            return f"phone is {'on' if self.phone_on else 'off'}", False
        if tool == "check_phone":
            return f"phone is {'on' if self.phone_on else 'off'}", False
        if tool == "think":
            return "", False
        return f"Error: Tool '{tool}' not found.", True


class Script:
    """A session written line by line: the user speaks, the agent calls, tools answer."""

    def __init__(self, session_id: str = "s1", app: str = "shop") -> None:
        self.events: list[Any] = []
        self.session_id = session_id
        self.app = app
        self._n = 0

    def user(self, text: str, *calls: tuple[str, dict[str, Any]]) -> "Script":
        self.events.append(UserMessage(text=text, calls=[self._call(t, a) for t, a in calls]))
        return self

    def agent(self, *calls: tuple[str, dict[str, Any]], text: str = "", tokens: int | None = None) -> "Script":
        usage = Usage(input_tokens=tokens) if tokens is not None else None
        self.events.append(LLMTurn(text=text, calls=[self._call(t, a) for t, a in calls], usage=usage))
        return self

    def result(self, content: str, error: bool = False) -> "Script":
        """The result of the oldest call still waiting for one."""
        call = self._waiting()[0]
        self.events.append(ToolResult(call_id=call.call_id, tool=call.tool, content=content, error=error))
        return self

    def play(self, shop: Shop) -> "Script":
        """Every call still waiting gets its result from the shop, in order."""
        for call in self._waiting():
            requestor = "user" if any(call in e.calls for e in self.events if isinstance(e, UserMessage)) else "agent"
            content, error = shop.call(call.tool, call.arguments, requestor)
            self.events.append(ToolResult(call_id=call.call_id, tool=call.tool, content=content, error=error))
        return self

    def session(self) -> Session:
        header = SessionHeader(session_id=self.session_id, harness="test", app=self.app, manifest=MANIFEST,
                               task_id=self.session_id, agent_model="fake-agent")
        return Session(header=header, events=list(self.events))

    def _waiting(self) -> list[ToolCall]:
        done = {e.call_id for e in self.events if isinstance(e, ToolResult)}
        return [c for e in self.events if isinstance(e, (LLMTurn, UserMessage)) for c in e.calls
                if c.call_id not in done]

    def _call(self, tool: str, arguments: dict[str, Any]) -> ToolCall:
        self._n += 1
        return ToolCall(call_id=f"c{self._n}", tool=tool, arguments=arguments)


@dataclass
class Binding:
    arguments: dict[str, Any]
    rho: float
    sources: list[str]


@dataclass
class TableFlow:
    """A FlowModel from tables: reach by the last step's tool, one value per read from a result.

    `reach[last_tool][tool]` is r(tool | h); `binds[tool] = (argument, source tool, path)` takes
    the argument from the newest result of the source tool. A read already made since the last
    write is never bound again.
    """

    reach_table: dict[str, dict[str, float]]
    binds: dict[str, tuple[str, str, str]]
    rho: float = 1.0
    manifest: ToolManifest = field(default_factory=lambda: MANIFEST)
    thresholds: dict[str, float] = field(default_factory=dict)
    skip_made: bool = True

    def read_tools(self) -> list[str]:
        return self.manifest.reads()

    def reach(self, history: list[str], tool: str) -> float:
        last = history[-1].split("/")[0] if history else "start"
        return self.reach_table.get(last, {}).get(tool, 0.0)

    def next_step(self, history: list[str]) -> dict[str, float]:
        last = history[-1].split("/")[0] if history else "start"
        row = self.reach_table.get(last, {})
        total = sum(row.values()) or 1.0
        return {t: p / total for t, p in row.items()}

    def bind(self, tool: str, state: ToolState, site: str) -> Binding | None:
        if tool not in self.binds:
            return None
        argument, source, path = self.binds[tool]
        entry = state.newest_holding(source, path)
        if entry is None:
            return None
        values = entry.index.values_at(path)
        if not values:
            return None
        arguments = {argument: values[0]}
        if self.skip_made and state.already_made(tool, arguments):
            return None
        return Binding(arguments, self.rho, [f"{source}:{path}"])

    def threshold(self, site: str, default: float) -> float:
        return self.thresholds.get(site, default)

    def step_symbol(self, tool: str, error: bool, content: str, parsed: Any) -> str:
        return f"{tool}/{'failed' if error else 'ok'}/0"

    def reply_symbol(self, answered: bool = True) -> str:
        return f"reply/{'answered' if answered else 'ended'}/0"


def shop_flow(**reach: dict[str, float]) -> TableFlow:
    """The shop's flow: after find_user, get_user (0.9); after get_user, get_order of its first order."""
    table = {"find_user": {"get_user": 0.9}, "get_user": {"get_order": 0.8}}
    table.update(reach)
    return TableFlow(table, {"get_user": ("user_id", "find_user", "$"),
                             "get_order": ("order_id", "get_user", "$.orders[*]")})
