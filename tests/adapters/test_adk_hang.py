"""A lookup of a sync ADK function tool that never returns: the run goes on with the agent's own
result, the tool cools down (recorded), and the process exits when the run is done."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

from adk_support import SHOP_READS, Shop, run_app, session_file, shop_agent, shop_flow, steps
from stretto_adk import RESULT_KEY, StrettoPlugin
from stretto_core import read_session

HERE = Path(__file__).resolve().parent
FOREVER = threading.Event()


def never_returns(_customer_id: str) -> Any:
    FOREVER.wait()


def hanging_run(store: Path) -> Any:
    shop = Shop(customer=never_returns, sync=True)
    agent = shop_agent(shop, steps([("get_order", {"order_id": "O5"})], [("refund", {"order_id": "O5"})], "done"))
    plugin = StrettoPlugin(flow=shop_flow(), store=store, reads=SHOP_READS, writes=["refund"], lookup_timeout=0.3,
                           call_budget=0.6)
    return shop, agent, run_app(agent, [plugin], ["please refund order O5"])


def test_a_run_whose_lookup_never_returns_goes_on_and_the_tool_cools_down(tmp_path: Path) -> None:
    shop, agent, running = hanging_run(tmp_path)
    asyncio.run(asyncio.wait_for(running, 30))
    assert shop.ran_tools()[-1] == "refund"
    events = read_session(session_file(tmp_path)).events
    [lookup] = [e for e in events if e.kind == "lookup"]
    assert lookup.tool == "get_customer" and lookup.abandoned
    assert [e.reason for e in events if e.kind == "refusal"] == ["lookup_timeout", "cooldown"]


def test_a_process_whose_adk_lookup_never_returns_exits_when_its_run_is_done(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import asyncio, sys, threading
        sys.path.insert(0, {str(HERE)!r})
        from pathlib import Path
        from test_adk_hang import hanging_run
        shop, agent, running = hanging_run(Path({str(tmp_path)!r}))
        asyncio.run(running)
        print("ran:", shop.ran_tools())
        print("non-daemon:", [t.name for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "'refund'" in done.stdout and "non-daemon: []" in done.stdout
