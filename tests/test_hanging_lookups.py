"""A lookup of a tool that never returns costs the agent its budget at most: the caller goes on,
the hung call keeps no thread the agent needs and keeps no process alive, and the tool cools
down (no lookups of it for a while, recorded as a `cooldown` refusal)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

from shop_sessions import shop_flow, shop_sessions
from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.serve.lookups import Limits, run_lookups_async
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import ToolResult

FOREVER = threading.Event()  # never set: a tool waiting on it never returns
LIMITS = Limits(lookup_timeout=0.2, call_budget=0.5)
TESTS = Path(__file__).resolve().parent


def never_returns(tool: str, args: dict[str, Any]) -> Any:
    FOREVER.wait()


def first_lookups(engine: Engine, session: Any, call_tool: Any) -> tuple[list, Any]:
    es = engine.session(live_manifest=session.header.manifest)
    es.note_refusals = True
    for event in session.events:
        es.observe(event)
        if isinstance(event, ToolResult):
            made = es.run_lookups(event.call_id, call_tool, limits=LIMITS)
            if made:
                return made, es
    raise AssertionError("the flow made no lookup in this session")


def test_run_lookups_returns_within_its_budget_when_a_sync_tool_never_returns() -> None:
    engine = Engine(FlowRuntime(shop_flow()), EngineConfig(theta=0.0))
    started = time.monotonic()
    made, _ = first_lookups(engine, shop_sessions(30)[20], never_returns)
    assert time.monotonic() - started < 5 * LIMITS.call_budget + 2  # (generous: a loaded machine)
    assert made and all(lk.abandoned and "abandoned" in lk.content for lk in made)


def test_a_tool_that_timed_out_cools_down_for_every_session_of_the_engine_and_each_says_so() -> None:
    engine = Engine(FlowRuntime(shop_flow()), EngineConfig(theta=0.0))
    sessions = shop_sessions(30)
    made, es = first_lookups(engine, sessions[20], never_returns)
    hung = made[0].tool
    refusals = es.take_refusals()
    assert [r.reason for r in refusals if r.tool == hung][:2] == ["lookup_timeout", "cooldown"]
    assert hung in engine.cooldowns.cooling() and engine.cooldowns.left(hung) > 30
    called: list[str] = []

    def answers(tool: str, args: dict[str, Any]) -> Any:
        called.append(tool)
        return "{}", False

    later, other = first_lookups(engine, sessions[21], answers)
    assert hung not in called
    assert [r.reason for r in other.take_refusals() if r.tool == hung] == ["cooldown"]


def test_a_tool_that_times_out_again_after_its_cooldown_cools_down_twice_as_long() -> None:
    from stretto_core.serve import workers

    cooldowns = workers.Cooldowns(seconds=0.05)
    assert cooldowns.timed_out("t") == 0.05
    time.sleep(0.06)
    assert "t" not in cooldowns.cooling()
    assert cooldowns.timed_out("t") == 0.1


def test_the_async_path_returns_on_time_even_when_the_call_ignores_its_cancel() -> None:
    engine = Engine(FlowRuntime(shop_flow()), EngineConfig(theta=0.0))
    session = shop_sessions(30)[20]
    es = engine.session(live_manifest=session.header.manifest)

    async def stubborn(tool: str, args: dict[str, Any]) -> Any:
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue  # a call that defers its cancel (e.g. one waiting on a worker thread)

    async def run() -> list:
        for event in session.events:
            es.observe(event)
            if isinstance(event, ToolResult):
                made = await run_lookups_async(es, event.call_id, stubborn, LIMITS)
                if made:
                    return made
        return []

    async def main() -> list:
        return await asyncio.wait_for(run(), 10)  # a hang fails the test instead of hanging it

    loop = asyncio.new_event_loop()
    try:
        made = loop.run_until_complete(main())
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()  # the stubborn call ignores this: the loop is closed under it
        loop.close()
    assert made and all(lk.abandoned for lk in made)


def test_a_process_whose_lookup_hangs_forever_still_exits() -> None:
    script = textwrap.dedent(f"""
        import sys, threading
        sys.path.insert(0, {str(TESTS)!r})
        from shop_sessions import shop_flow, shop_sessions
        from stretto_core.serve.engine import Engine, EngineConfig
        from stretto_core.serve.lookups import Limits
        from stretto_core.serve.runtime import FlowRuntime
        from stretto_core.sessions.model import ToolResult

        engine = Engine(FlowRuntime(shop_flow()), EngineConfig(theta=0.0))
        session = shop_sessions(30)[20]
        es = engine.session(live_manifest=session.header.manifest)
        made = []
        for event in session.events:
            es.observe(event)
            if isinstance(event, ToolResult):
                made += es.run_lookups(event.call_id, lambda tool, args: threading.Event().wait(),
                                       limits=Limits(lookup_timeout=0.1, call_budget=0.3))
        assert made, "no lookup was made"
        stray = [t.name for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()]
        print("non-daemon threads:", stray)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "non-daemon threads: []" in done.stdout
