"""Sessions as an app records them: the demo shop's agent served live, with no task id or label."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Iterable

from stretto_core.demo.agent import new_customer
from stretto_core.demo.builtin import _conversation
from stretto_core.demo.shop import SHOP_APP, SHOP_MANIFEST
from stretto_core.serve.live import LiveSession, Stretto


def app_stretto(flow: Path | None, store: Path, **options) -> Stretto:
    """The shop app's one line: its flow path (which may not exist yet) and its session store."""
    options.setdefault("app", SHOP_APP)
    return Stretto(flow, manifest=SHOP_MANIFEST, store=store, harness="stretto-demo", agent_model="scripted",
                   **options)


def serve_app(stretto: Stretto, customers: Iterable[int], tag: str = "s") -> list[LiveSession]:
    """Each customer served once by the running app, one session each, ids unique per tag."""
    served = []
    for index in customers:
        shop, agent = new_customer(index)
        live = stretto.session(f"{tag}-{index:03d}")
        try:
            asyncio.run(_conversation(shop, agent, live))
        finally:
            live.close()
        served.append(live)
    return served
