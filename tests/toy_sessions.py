"""A toy app's one-refund sessions (read an order, refund it): the smallest learnable session."""

from __future__ import annotations

import json
from typing import Any

from stretto_core import ToolManifest
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage

TOY_MANIFEST = ToolManifest.declare("toy", reads=["get_order"], writes=["refund"])


def refund_session(i: int) -> Session:
    """Customer `i` asks for order O<i> to be refunded: the agent reads the order, then refunds it."""
    order = {"order_id": f"O{i}", "total": i}
    events: list[Any] = [UserMessage(text=f"refund O{i}"),
                         LLMTurn(calls=[ToolCall(call_id="a", tool="get_order", arguments={"order_id": f"O{i}"})]),
                         ToolResult(call_id="a", tool="get_order", content=json.dumps(order), parsed=order),
                         LLMTurn(calls=[ToolCall(call_id="b", tool="refund", arguments={"order_id": f"O{i}"})]),
                         ToolResult(call_id="b", tool="refund", content="ok"), LLMTurn(text="done")]
    return Session(header=SessionHeader(session_id=f"toy-{i}", harness="test", app="toy", manifest=TOY_MANIFEST),
                   events=events)
