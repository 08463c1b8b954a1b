"""A lookup of a sync tool that never returns, in the OpenAI Agents adapter: `Runner.run` returns
on time with the agent's own result, a long-lived loop of conversations never starves, and the
process can exit. The tools are the SDK's own `function_tool`s of plain (sync) functions."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

from openai_support import READS, WRITES, order_of, order_then_done, outputs_seen, scripted_agent, shop_flow

from agents import Runner, function_tool
from stretto_core import read_session
from stretto_openai_agents import instrument, runtime_of

FOREVER = threading.Event()
HERE = Path(__file__).resolve().parent


def sync_tools() -> list[Any]:
    @function_tool
    def get_order(order_id: str) -> str:
        """An order by id."""
        return json.dumps(order_of(order_id))

    @function_tool
    def get_customer(customer_id: str) -> str:
        """A customer by id: this one never answers."""
        FOREVER.wait()
        return "{}"

    @function_tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "refunded"

    return [get_order, get_customer, refund]


def hanging_agent(tmp_path: Path, steps: list[Any]) -> tuple[Any, Any]:
    agent, model = scripted_agent(sync_tools(), steps)
    return instrument(agent, flow=shop_flow(), reads=READS, writes=WRITES, store=tmp_path,
                      lookup_timeout=0.3, call_budget=0.6), model


def test_runner_run_returns_with_the_agents_result_when_a_lookup_never_returns(tmp_path: Path) -> None:
    agent, model = hanging_agent(tmp_path, order_then_done())
    result = asyncio.run(asyncio.wait_for(Runner.run(agent, "Refund order O5."), 30))
    assert result.final_output == "Done."
    assert json.loads(outputs_seen(model, 1)["call-1"]) == order_of("O5")  # unchanged, nothing appended
    [lookup] = runtime_of(agent).sessions[-1].lookups
    assert lookup.tool == "get_customer" and lookup.abandoned
    [path] = tmp_path.glob("*.jsonl")
    events = read_session(path).events
    assert [e.reason for e in events if e.kind == "refusal"] == ["lookup_timeout", "cooldown"]


def test_a_long_lived_loop_of_conversations_never_starves_while_lookups_hang(tmp_path: Path) -> None:
    steps: list[Any] = []
    for i in range(10):
        steps += order_then_done(f"O{i + 10}")
    agent, model = hanging_agent(tmp_path, steps)

    async def conversations() -> list[str]:
        return [str((await Runner.run(agent, f"Refund order O{i + 10}.")).final_output) for i in range(10)]

    assert asyncio.run(asyncio.wait_for(conversations(), 60)) == ["Done."] * 10
    for i in range(10):  # each conversation's own sync tool ran, on the SDK's threads
        assert json.loads(outputs_seen(model, 2 * i + 1)["call-1"]) == order_of(f"O{i + 10}")


def test_a_process_whose_lookup_never_returns_exits_when_its_run_is_done(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import asyncio, sys, threading
        sys.path.insert(0, {str(HERE)!r})
        from pathlib import Path
        from test_openai_agents_hang import hanging_agent
        from openai_support import order_then_done
        from agents import Runner
        agent, _ = hanging_agent(Path({str(tmp_path)!r}), order_then_done())
        print(asyncio.run(Runner.run(agent, "Refund order O5.")).final_output)
        print("non-daemon:", [t.name for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Done." in done.stdout and "non-daemon: []" in done.stdout
