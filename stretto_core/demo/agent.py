"""The shop's scripted support agent: the model of `stretto demo`, in whichever harness runs it.

Nothing here is an LLM. The agent follows the routine a support agent follows (identify the
customer, read their details, walk their orders until it finds the one the customer describes,
cancel it after confirmation), with seeded randomness in which customer, which order, and how it
phrases things. A harness drives it one step at a time, as an SDK drives a model:
`customer()` is what the customer says next (the input of one run), `next_turn(results)` the
agent's next LLM turn given the tool results it received since its last one. A turn without
calls is the agent's reply: the customer speaks next, or the conversation is over.

The agent reads the results as it received them, lookups stretto appended included (the fenced
appendix, parsed as a reader of the text would), and does not ask again for a call whose result
it already holds: that is how the demo measures live savings, in the built-in harness and in a
real SDK alike. Its token usage is counted from what it read, so it is the same in both.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Generator, Sequence

from stretto_core.demo.shop import SHOP_SEED, Shop
from stretto_core.serve.results import split_appendix
from stretto_core.sessions.model import ToolCall, Usage

PROMPT_TOKENS = 1500
"""A nominal prompt size per LLM turn, so the recorded sessions carry token usage."""


@dataclass(frozen=True)
class _Customer:
    text: str


@dataclass(frozen=True)
class _Act:
    text: str
    calls: list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class AgentTurn:
    """One LLM turn: its text, the calls it makes (none for a reply) and its token usage."""

    text: str
    calls: list[ToolCall]
    usage: Usage


Script = Generator["_Customer | _Act", "list[str] | None", None]


def new_customer(index: int) -> tuple[Shop, "SupportAgent"]:
    """Customer `index`: a fresh copy of the shop, and the agent's conversation with them (its
    own seeded draw of who they are, which order, and how the agent walks the orders)."""
    shop = Shop.generate(random.Random(SHOP_SEED))
    return shop, SupportAgent(shop, random.Random(1000 + index))


def call_key_text(tool: str, args: dict[str, Any]) -> str:
    return tool + " " + json.dumps(args, sort_keys=True)


@dataclass
class SupportAgent:
    """One customer's conversation with the scripted agent, stepped by a harness."""

    shop: Shop
    rng: random.Random
    held: dict[str, str] = field(default_factory=dict)
    """Every result the agent holds, by call: its own calls' and the lookups appended to them."""
    context_tokens: int = PROMPT_TOKENS
    calls_made: int = 0

    def __post_init__(self) -> None:
        self._script = self._conversation()
        self._step: _Customer | _Act | None = next(self._script)
        self._awaiting = False

    def customer(self) -> str | None:
        """What the customer says next, or None when the conversation is over."""
        step = self._step
        if step is None:
            return None
        if not isinstance(step, _Customer):
            raise RuntimeError("the agent has a turn to take before the customer speaks")
        self.context_tokens += len(step.text) // 4
        self._step = next(self._script, None)
        return step.text

    def next_turn(self, results: Sequence[str] = ()) -> AgentTurn:
        """The agent's next turn, given the results of its previous turn's calls (as received)."""
        if self._awaiting:
            self.context_tokens += sum(len(text) // 4 for text in results)
            self._step = self._script.send(list(results))
        step = self._step
        if not isinstance(step, _Act):
            raise RuntimeError("the customer speaks next; the agent has no turn to take")
        usage = Usage(input_tokens=self.context_tokens, output_tokens=20 + len(step.text) // 4)
        calls = []
        for tool, args in step.calls:
            self.calls_made += 1
            calls.append(ToolCall(call_id=f"call_{self.calls_made}", tool=tool, arguments=args))
        self._awaiting = bool(calls)
        if not calls:
            self._step = next(self._script, None)
        return AgentTurn(step.text, calls, usage)

    # -- the routine -----------------------------------------------------------------------------
    def _read(self, tool: str, **args: Any) -> Generator[_Act, "list[str] | None", str]:
        """A read the agent needs: from what it holds, or by calling the tool."""
        key = call_key_text(tool, args)
        if key not in self.held:
            results = yield _Act("", [(tool, args)])
            own, appended = split_appendix((results or [""])[0])
            self.held[key] = own
            for lookup in appended:
                if not lookup.failed:
                    self.held.setdefault(call_key_text(lookup.tool, lookup.arguments), lookup.content)
        return self.held[key]

    def _conversation(self) -> Script:
        shop, rng = self.shop, self.rng
        user = shop.users[rng.choice(sorted(shop.users))]
        pending = [o for o in user["orders"] if shop.orders[o]["status"] == "pending"]
        target = rng.choice(pending) if pending else rng.choice(user["orders"])
        item = shop.orders[target]["items"][0]["name"]
        yield _Customer(f"Hi, I want to cancel my order with the {item}.")
        yield _Act("Sure. What is your email address?", [])
        yield _Customer(f"It is {user['email']}.")
        user_id = yield from self._read("find_user_id_by_email", email=user["email"])
        details = json.loads((yield from self._read("get_user_details", user_id=user_id)))
        found = None
        for order_id in details["orders"]:
            order = json.loads((yield from self._read("get_order_details", order_id=order_id)))
            if rng.random() < 0.3:
                yield from self._read("get_product_details", product_id=order["items"][0]["product_id"])
            if any(i["name"] == item for i in order["items"]):
                found = order
                break
        if found is None or found["status"] != "pending":
            yield _Act(f"I'm sorry, that order is {found['status'] if found else 'not found'} and cannot be "
                       "cancelled.", [])
            return
        yield _Act(f"I found order {found['order_id']} with the {item}. Shall I cancel it?", [])
        yield _Customer("Yes please.")
        yield _Act("", [("cancel_pending_order", {"order_id": found["order_id"], "reason": "no longer needed"})])
        yield _Act("Your order is cancelled.", [])
