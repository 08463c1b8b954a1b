"""A lookup of a sync LangGraph tool that never returns: `invoke` and `ainvoke` return on time
with the agent's own result, through `create_agent` and a plain graph, the tool cools down
(recorded), and the process exits."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from langchain_core.tools import StructuredTool

from langgraph_support import FRONTS, MODES, READS, WRITES, Shop, order_then_reply, serve_once, session_files, toy_flow

HERE = Path(__file__).resolve().parent
FOREVER = threading.Event()


def shop_whose_customer_never_answers() -> Shop:
    def get_customer(customer_id: str) -> str:
        """Look up a customer (this one never answers)."""
        FOREVER.wait()
        return "{}"

    shop = Shop()
    shop.tools[1] = StructuredTool.from_function(get_customer)  # sync only: no coroutine of its own
    return shop


@pytest.mark.parametrize("front", FRONTS)
@pytest.mark.parametrize("mode", MODES)
def test_a_run_whose_sync_lookup_never_returns_comes_back_with_the_agents_result(front: str, mode: str,
                                                                                  tmp_path: Path) -> None:
    shop = shop_whose_customer_never_answers()
    done: list = []
    runner = threading.Thread(target=lambda: done.append(serve_once(
        front, mode, shop, order_then_reply(), tmp_path, toy_flow(), reads=READS, writes=WRITES,
        lookup_timeout=0.3, call_budget=0.6)), daemon=True)
    runner.start()
    runner.join(60)
    assert done, f"{mode} never returned"
    messages, model, _ = done[0]
    assert messages[-1].content == "done"
    order = [m for m in model.seen[1] if getattr(m, "tool_call_id", None) == "call_1"][0]
    assert json.loads(order.content)["order_id"] == "O1"
    (session,) = session_files(tmp_path)
    [lookup] = [e for e in session.events if e.kind == "lookup"]
    assert lookup.tool == "get_customer" and lookup.abandoned
    assert [e.reason for e in session.events if e.kind == "refusal"] == ["lookup_timeout", "cooldown"]


@pytest.mark.parametrize("mode", MODES)
def test_a_process_whose_langgraph_lookup_never_returns_exits(mode: str, tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import sys, threading
        sys.path.insert(0, {str(HERE)!r})
        from pathlib import Path
        from test_langgraph_hang import shop_whose_customer_never_answers
        from langgraph_support import READS, WRITES, order_then_reply, serve_once, toy_flow
        messages, _, _ = serve_once("agent", {mode!r}, shop_whose_customer_never_answers(), order_then_reply(),
                                    Path({str(tmp_path)!r}), toy_flow(), reads=READS, writes=WRITES,
                                    lookup_timeout=0.3, call_budget=0.6)
        print(messages[-1].content)
        print("non-daemon:", [t.name for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "done" in done.stdout and "non-daemon: []" in done.stdout
