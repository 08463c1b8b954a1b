"""A demonstrator that follows τ²-bench telecom's written solo workflow, to make training episodes.

The shared data has 20 recorded solo sessions of 5 training tasks; a procedure needs many
consistent demonstrations. This demonstrator is the written policy made executable, step by step
as `tech_support_workflow_solo.md` and `main_policy_solo.md` say (identify the customer by the
ticket's phone number; Path 1 for service, 2.1 for unavailable data, 2.2 for slow data, 3 for
MMS; escalate with `transfer_to_human_agents` where the policy says to). It sees only the ticket
and its own tool results, never the task's evaluation criteria, and it keeps the procedure's
guard (it does not repeat a read before a write), so its episodes teach calls the runtime may make.

It is a generator: it yields `(tool, arguments)` and is sent `(text, is_error)`, so the same
brain drives a recording run and, in the cascade's benchmark, a scripted model.
"""

from __future__ import annotations

import json
import re
from typing import Any, Generator

Call = tuple[str, dict[str, Any]]
Result = tuple[str, bool]
Workflow = Generator[Call, Result, None]

TODAY = "2025-02-25"
"""The policy's current date: a contract that ended before it cannot be lifted."""

TRANSFER_SUMMARY = "The customer's issue could not be resolved with the workflow; escalating to technical support."
OPTIMAL_MODE = "4g_5g_preferred"
MMS_PERMISSIONS = ("sms", "storage")
MAX_REFUEL_GB = 2.0
"""The policy's most data a line may be refueled with: what the demonstrator refuels when the
ticket names no amount and does not refuse (no one is there to ask in solo mode)."""


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _signal(status_bar: str) -> bool:
    return "No Signal" not in status_bar and "Airplane Mode" not in status_bar


def _connected(speed: str) -> bool:
    return not speed.startswith("Speed test failed")


class _Session:
    """The demonstrator's memory of one run: what it read since its last write."""

    def __init__(self) -> None:
        self.fresh: dict[str, str] = {}

    def wrote(self) -> None:
        self.fresh.clear()


def telecom_workflow(ticket: str, known: dict[str, str] | None = None) -> Workflow:
    """The written solo workflow, as a generator of calls.

    `known` holds results already in hand and still current (no write since), by
    `tool + json(arguments)`: the workflow uses them instead of reading again.
    """
    lower = ticket.lower()
    memory = _Session()
    memory.fresh.update(known or {})

    def read(tool: str, args: dict[str, Any] | None = None) -> Generator[Call, Result, str]:
        key = tool + json.dumps(args or {}, sort_keys=True)
        if key in memory.fresh:
            return memory.fresh[key]
        text, _ = yield (tool, dict(args or {}))
        memory.fresh[key] = text
        return text

    def write(tool: str, args: dict[str, Any] | None = None) -> Generator[Call, Result, str]:
        text, _ = yield (tool, dict(args or {}))
        memory.wrote()
        return text

    phone_match = re.search(r"\d{3}-\d{3}-\d{4}", ticket)
    if phone_match is None:
        yield from write("transfer_to_human_agents", {"summary": TRANSFER_SUMMARY})
        return
    phone = phone_match.group(0)
    customer = _json((yield from read("get_customer_by_phone", {"phone_number": phone}))) or {}
    line: dict[str, Any] = {}
    for line_id in customer.get("line_ids", []):
        details = _json((yield from read("get_details_by_id", {"id": line_id}))) or {}
        if details.get("phone_number") == phone:
            line = details
            break
    customer_id, line_id = customer.get("customer_id"), line.get("line_id")
    if not customer_id or not line_id:
        yield from write("transfer_to_human_agents", {"summary": TRANSFER_SUMMARY})
        return
    ctx = _Context(lower, customer_id, line_id, line)
    if "mms" in lower:
        done = yield from _mms(ctx, read, write)
    elif "speed test" in lower or "mobile data" in lower:
        done = yield from _mobile_data(ctx, read, write)
    else:
        done = yield from _service(ctx, read, write)
    if not done:
        yield from write("transfer_to_human_agents", {"summary": TRANSFER_SUMMARY})


class _Context:
    def __init__(self, ticket: str, customer_id: str, line_id: str, line: dict[str, Any]) -> None:
        self.ticket, self.customer_id, self.line_id, self.line = ticket, customer_id, line_id, line
        self.abroad = "abroad" in ticket
        amount = re.search(r"refuel (\d+(?:\.\d+)?) ?gb", ticket)
        refuses = re.search(r"(not|never) (want to |be willing to )?refuel", ticket)
        self.refuel = float(amount.group(1)) if amount else None if refuses else MAX_REFUEL_GB
        self.may_pay = "permission to pay" in ticket


def _service(ctx: _Context, read, write) -> Generator[Call, Result, bool]:
    """Path 1: no service. True when the status bar shows signal."""
    if _signal((yield from read("check_status_bar"))):
        return True
    network = yield from read("check_network_status")
    if "Airplane Mode: ON" in network:
        yield from write("toggle_airplane_mode")
        if _signal((yield from read("check_status_bar"))):
            return True
    sim = yield from read("check_sim_status")
    if "No SIM" in sim:
        yield from write("reseat_sim_card")
        sim = yield from read("check_sim_status")
        if _signal((yield from read("check_status_bar"))):
            return True
    if "locked" in sim:
        return False
    yield from write("reset_apn_settings")
    yield from write("reboot_device")
    if _signal((yield from read("check_status_bar"))):
        return True
    if ctx.line.get("status") != "Suspended":
        return False
    if (ctx.line.get("contract_end_date") or "9999") < TODAY or not ctx.may_pay:
        return False
    bills = _json((yield from read("get_bills_for_customer", {"customer_id": ctx.customer_id}))) or []
    overdue = [b for b in bills if isinstance(b, dict) and b.get("status") == "Overdue"]
    for bill in overdue:
        yield from write("send_payment_request", {"customer_id": ctx.customer_id, "bill_id": bill["bill_id"]})
        yield from read("check_payment_request")
        yield from write("make_payment")
    if overdue:
        yield from read("get_bills_for_customer", {"customer_id": ctx.customer_id})
    yield from write("resume_line", {"customer_id": ctx.customer_id, "line_id": ctx.line_id})
    yield from write("reboot_device")
    return _signal((yield from read("check_status_bar")))


def _data_connectivity(ctx: _Context, read, write) -> Generator[Call, Result, str]:
    """Path 2.1: unavailable mobile data. Returns the last speed test."""
    speed = yield from read("run_speed_test")
    if _connected(speed):
        return speed
    if not (yield from _service(ctx, read, write)):
        return speed
    speed = yield from read("run_speed_test")
    if _connected(speed):
        return speed
    if ctx.abroad:
        network = yield from read("check_network_status")
        if "Data Roaming Enabled: No" in network:
            yield from write("toggle_roaming")
            speed = yield from read("run_speed_test")
            if _connected(speed):
                return speed
        if not ctx.line.get("roaming_enabled"):
            yield from write("enable_roaming", {"customer_id": ctx.customer_id, "line_id": ctx.line_id})
            speed = yield from read("run_speed_test")
            if _connected(speed):
                return speed
    network = yield from read("check_network_status")
    if "Mobile Data Enabled: No" in network:
        yield from write("toggle_data")
        speed = yield from read("run_speed_test")
        if _connected(speed):
            return speed
    usage = _json((yield from read("get_data_usage", {"customer_id": ctx.customer_id, "line_id": ctx.line_id}))) or {}
    try:
        exceeded = float(usage["data_used_gb"]) >= float(usage["data_limit_gb"]) + float(usage.get("data_refueling_gb", 0))
    except (KeyError, TypeError, ValueError):
        exceeded = False
    if exceeded and ctx.refuel:
        yield from write("refuel_data", {"customer_id": ctx.customer_id, "line_id": ctx.line_id, "gb_amount": ctx.refuel})
        speed = yield from read("run_speed_test")
    return speed


def _mobile_data(ctx: _Context, read, write) -> Generator[Call, Result, bool]:
    """Path 2: data unavailable, then slow. True when the speed test says Excellent."""
    speed = yield from _data_connectivity(ctx, read, write)
    if not _connected(speed):
        return False
    if "(Excellent)" in speed:
        return True
    if "Data Saver mode is ON" in (yield from read("check_data_restriction_status")):
        yield from write("toggle_data_saver_mode")
        if "(Excellent)" in (speed := (yield from read("run_speed_test"))):
            return True
    if OPTIMAL_MODE not in (yield from read("check_network_mode_preference")):
        yield from write("set_network_mode_preference", {"mode": OPTIMAL_MODE})
        if "(Excellent)" in (speed := (yield from read("run_speed_test"))):
            return True
    if "VPN is ON" in (yield from read("check_vpn_status")):
        yield from write("disconnect_vpn")
        if "(Excellent)" in (yield from read("run_speed_test")):
            return True
    return False


def _mms(ctx: _Context, read, write) -> Generator[Call, Result, bool]:
    """Path 3: MMS. True when the messaging app can send MMS."""
    def can() -> Generator[Call, Result, bool]:
        return "cannot" not in (yield from read("can_send_mms"))

    if (yield from can()):
        return True
    if not (yield from _service(ctx, read, write)):
        return False
    if (yield from can()):
        return True
    if not _connected((yield from _data_connectivity(ctx, read, write))):
        return False
    if (yield from can()):
        return True
    if "2g_only" in (yield from read("check_network_mode_preference")):
        yield from write("set_network_mode_preference", {"mode": OPTIMAL_MODE})
        if (yield from can()):
            return True
    if "ON" in (yield from read("check_wifi_calling_status")):
        yield from write("toggle_wifi_calling")
        if (yield from can()):
            return True
    permissions = yield from read("check_app_permissions", {"app_name": "messaging"})
    granted = permissions.split("permission for:")[-1] if "permission for:" in permissions else ""
    missing = [p for p in MMS_PERMISSIONS if p not in granted]
    for permission in missing:
        yield from write("grant_app_permission", {"app_name": "messaging", "permission": permission})
    if missing and (yield from can()):
        return True
    if "Not Set" in (yield from read("check_apn_settings")).split("MMSC URL")[-1].splitlines()[0]:
        yield from write("reset_apn_settings")
        yield from write("reboot_device")
        if (yield from can()):
            return True
    return False


class WorkflowModel:
    """The workflow as a scripted model for the cascade: one call per LLM turn, on the live state.

    It follows the written workflow from its start, on the state the procedure left, taking from
    its context (the procedure's calls and results) every read made after the procedure's last
    write instead of making it again; any other call is one LLM turn, and a last turn with no
    call ends its part. `reads` are the tools it may take from the context (the shipped
    manifest's reads by default).
    """

    def __init__(self, ticket: str, reads: set[str] | None = None) -> None:
        self.ticket = ticket
        self.reads = reads if reads is not None else _manifest_reads()
        self.workflow: Workflow | None = None

    def _known(self, context: list[dict[str, Any]]) -> dict[str, str]:
        calls = {c["id"]: c for m in context if m.get("role") == "assistant" for c in m.get("tool_calls") or []}
        known: dict[str, str] = {}
        for message in context:
            if message.get("role") != "tool" or message.get("id") not in calls:
                continue
            call = calls[message["id"]]
            if call["name"] not in self.reads:
                known.clear()
            elif not message.get("error"):
                known[call["name"] + json.dumps(call.get("arguments") or {}, sort_keys=True)] = message.get("content", "")
        return known

    def turn(self, context: list[dict[str, Any]]):
        from stretto_core.procedures.cascade import ModelTurn

        try:
            if self.workflow is None:
                self.workflow = telecom_workflow(self.ticket, self._known(context))
                call = next(self.workflow)
            else:
                last = next(m for m in reversed(context) if m.get("role") == "tool")
                call = self.workflow.send((last.get("content", ""), bool(last.get("error"))))
        except StopIteration:
            return ModelTurn(text="done")
        return ModelTurn(calls=[call])


def _manifest_reads() -> set[str]:
    from stretto_core.paths import manifest_path
    from stretto_core.sessions.manifest import load_manifest

    return set(load_manifest(manifest_path("tau2", "telecom")).reads())
