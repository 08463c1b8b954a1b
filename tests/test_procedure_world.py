"""A toy solo world for procedure tests: a customer's lamp, fixed by calls alone, no user speaking.

Tools: `get_customer_by_phone` and `get_line` (JSON reads), `check_lamp` (a text read),
`replace_fuse`, `toggle_lamp`, `resume_line` (writes), `transfer_to_human` (the handoff). A
welded fuse cannot be fixed: the policy says transfer. Every customer has other ids, so only
bindings by provenance carry from one to another.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from stretto_core.procedures.episodes import Episode
from stretto_core.procedures.state import Step

KINDS = {"get_customer_by_phone": "read", "get_line": "read", "check_lamp": "read", "replace_fuse": "write",
         "toggle_lamp": "write", "resume_line": "write", "transfer_to_human": "generic"}


@dataclass
class Lamp:
    """One customer's account and lamp."""

    customer_id: str
    phone: str
    other_phone: str
    lamp_on: bool = False
    fuse: str = "ok"
    suspended: bool = False
    stuck: bool = False
    log: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def line_ids(self) -> list[str]:
        return [f"L{self.customer_id[1:]}1", f"L{self.customer_id[1:]}2"]

    def ticket(self) -> str:
        return (f"Customer phone {self.phone}. The lamp does not light. "
                "They will consider it resolved when the lamp is on.")

    def call(self, tool: str, args: dict[str, Any]) -> tuple[str, bool]:
        self.log.append((tool, dict(args)))
        if tool == "get_customer_by_phone":
            if args.get("phone") != self.phone:
                return "Error: customer not found", True
            return json.dumps({"customer_id": self.customer_id, "line_ids": self.line_ids}), False
        if tool == "get_line":
            if args.get("id") not in self.line_ids:
                return "Error: line not found", True
            mine = args["id"] == self.line_ids[1]
            return json.dumps({"line_id": args["id"], "phone_number": self.phone if mine else self.other_phone,
                               "status": "Suspended" if mine and self.suspended else "Active"}), False
        if tool == "check_lamp":
            return f"Lamp: {'ON' if self.lamp_on else 'OFF'}\nFuse: {self.fuse}", False
        if tool == "replace_fuse":
            if self.fuse == "welded":
                return "Error: the fuse is welded in", True
            self.fuse = "ok"
            return "Fuse replaced.", False
        if tool == "toggle_lamp":
            if self.fuse == "ok" and not self.suspended and not self.stuck:
                self.lamp_on = not self.lamp_on
            return f"Lamp is now {'ON' if self.lamp_on else 'OFF'}.", False
        if tool == "resume_line":
            if args.get("customer_id") != self.customer_id or args.get("line_id") != self.line_ids[1]:
                return "Error: no such line", True
            self.suspended = False
            return "Line resumed.", False
        if tool == "transfer_to_human":
            return "Transfer successful", False
        return f"Error: Tool '{tool}' not found.", True


def demonstrate(world: Lamp) -> list[tuple[str, dict[str, Any], str, bool]]:
    """The toy policy, as a careful agent would follow it."""
    calls: list[tuple[str, dict[str, Any], str, bool]] = []

    def do(tool: str, args: dict[str, Any] | None = None) -> str:
        content, error = world.call(tool, args or {})
        calls.append((tool, dict(args or {}), content, error))
        return content

    customer = json.loads(do("get_customer_by_phone", {"phone": world.phone}))
    line = {}
    for line_id in customer["line_ids"]:
        line = json.loads(do("get_line", {"id": line_id}))
        if line["phone_number"] == world.phone:
            break
    if line["status"] == "Suspended":
        do("resume_line", {"customer_id": customer["customer_id"], "line_id": line["line_id"]})
    lamp = do("check_lamp")
    if "welded" in lamp:
        do("transfer_to_human", {"summary": f"Lamp of {world.phone} has a welded fuse, needs a technician."})
        return calls
    if "blown" in lamp:
        do("replace_fuse")
        lamp = do("check_lamp")
    if "OFF" in lamp:
        do("toggle_lamp")
        do("check_lamp")
    return calls


FAULTS = [dict(), dict(fuse="blown"), dict(suspended=True), dict(fuse="blown", suspended=True), dict(fuse="welded"),
          dict(lamp_on=False, fuse="welded", suspended=True)]


def customer(n: int, **faults: Any) -> Lamp:
    return Lamp(customer_id=f"C{1000 + n}", phone=f"555-{100 + n:03d}-{2000 + n:04d}",
                other_phone=f"555-{100 + n:03d}-{3000 + n:04d}", **faults)


def training_episodes(customers: range = range(1, 13)) -> list[Episode]:
    """Demonstrations on every fault for several customers."""
    episodes = []
    for n in customers:
        faults = FAULTS[n % len(FAULTS)]
        world = customer(n, **faults)
        calls = demonstrate(world)
        steps = [Step.of(t, a, c, e, KINDS[t]) for t, a, c, e in calls]
        ending = "handoff" if calls[-1][0] == "transfer_to_human" else "stop"
        episodes.append(Episode(session_id=f"toy-{n}", task_id=f"task-{n % len(FAULTS)}-{n}", ticket=world.ticket(),
                                steps=steps, ending=ending, reward=1.0, agent="toy-agent", source="recorded",
                                kinds=KINDS))
    return episodes


def test_the_toy_demonstrator_fixes_what_can_be_fixed_and_transfers_the_welded_fuse():
    fixed = customer(1, fuse="blown", suspended=True)
    assert [c[0] for c in demonstrate(fixed)][-2:] == ["toggle_lamp", "check_lamp"] and fixed.lamp_on
    welded = customer(2, fuse="welded")
    assert demonstrate(welded)[-1][0] == "transfer_to_human" and not welded.lamp_on
