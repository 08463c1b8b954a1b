"""The demo shop's scripted sessions and a flow learned from them: small, quick, real data for tests."""

from __future__ import annotations

import random
from functools import lru_cache
from pathlib import Path
import tempfile

from stretto_core.demo.builtin import serve_customers
from stretto_core.demo.shop import SHOP_MANIFEST, SHOP_SEED, Shop
from stretto_core.flow.ir import Flow, learn
from stretto_core.sessions.model import Session
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
