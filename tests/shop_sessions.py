"""The demo shop's scripted sessions and a flow learned from them: small, quick, real data for tests."""

from __future__ import annotations

import random
from functools import lru_cache
from pathlib import Path
import tempfile
from typing import Any

from stretto_core.demo.builtin import serve_customers
from stretto_core.demo.shop import SHOP_MANIFEST, SHOP_SEED, Shop
from stretto_core.flow.ir import Flow, learn
from stretto_core.sessions.model import LLMTurn, Session, ToolResult, UserMessage
from stretto_core.sessions.store import load_sessions

MANIFEST = SHOP_MANIFEST
WRITE = "cancel_pending_order"


@lru_cache(maxsize=None)
def _recorded(count: int) -> tuple[Session, ...]:
    folder = Path(tempfile.mkdtemp(prefix="stretto-shop-"))
    serve_customers(folder, range(count), "record")
    return tuple(sorted(load_sessions([folder]), key=lambda s: s.header.session_id))


def shop_sessions(count: int = 30) -> list[Session]:
    """`count` recorded sessions of the scripted shop agent (each with the shop's manifest)."""
    return [s.model_copy(deep=True) for s in _recorded(count)]


def shop_flow(train: int = 20) -> Flow:
    """A flow learned from the first `train` sessions."""
    return learn(shop_sessions(train), MANIFEST)


def shop_tools():
    """The shop's own tool function, `(tool, args) -> (text, error)`, on a fresh shop."""
    return Shop.generate(random.Random(SHOP_SEED)).call


def serve_recorded(live: Any, session: Session, call_tool: Any) -> None:
    """Feed a recorded session's events to a live session, as an adapter would, its lookups
    answered by `call_tool`."""
    calls = {c.call_id: c for c in session.agent_calls()}
    for event in session.events:
        if isinstance(event, UserMessage):
            live.user(event.text)
        elif isinstance(event, LLMTurn):
            live.llm_turn(event.text, event.calls)
        elif isinstance(event, ToolResult):
            call = calls[event.call_id]
            live.after_tool_sync(call.call_id, call.tool, call.arguments, (event.content, event.error), call_tool)


TAU2_RUN = {"info": {"environment_info": {"domain_name": "retail"}}, "simulations": [
    {"task_id": "1", "reward_info": {"reward": 1.0},
     "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}]}
"""The smallest τ²-bench run file `stretto ingest` reads: one simulation of one turn each."""


def write_shop_files(root: Path) -> tuple[list[Session], Path, Path, Path]:
    """Write 12 recorded shop sessions, the flow learned from them and the shop's manifest under
    `root`, as the CLI tests' good inputs: (sessions, sessions folder, flow file, manifest file)."""
    from stretto_core.flow.ir import save_flow
    from stretto_core.sessions.manifest import save_manifest
    from stretto_core.sessions.store import write_session

    recorded = shop_sessions(12)
    folder = root / "sessions"
    for s in recorded:
        write_session(s, folder)
    flow = root / "shop.flow.json"
    save_flow(shop_flow(12), flow)
    manifest = root / "shop.manifest.json"
    save_manifest(SHOP_MANIFEST, manifest)
    return recorded, folder, flow, manifest
