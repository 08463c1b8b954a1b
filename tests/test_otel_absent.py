"""Without `opentelemetry-api` (issue 27, item 4): in a Python where it cannot be imported, stretto
and every adapter whose SDK does not itself import it (the `mcp` SDK 2.x and google-adk do) import,
and a flow serves its lookups as before; stretto never imports opentelemetry on its own account."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""
    import importlib.abc, json, sys

    class NoOpenTelemetry(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, NoOpenTelemetry())
    import traceback
    imported, sdk_needs_it = [], []
    for adapter in ("stretto_openai_agents", "stretto_langgraph", "stretto_claude", "stretto_mcp", "stretto_adk"):
        try:
            __import__(adapter)
            imported.append(adapter)
        except ImportError as exc:
            frames = [f.filename for f in traceback.extract_tb(exc.__traceback__) if f.filename != "<string>"]
            if "opentelemetry" not in str(exc) or "site-packages" not in frames[-1]:
                raise  # stretto's own code asked for opentelemetry
            sdk_needs_it.append(adapter)  # the SDK itself imports opentelemetry (mcp, google-adk)
    from stretto_core import Stretto, ToolManifest, learn_flow
    from stretto_core.serve.telemetry import otel
    from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult

    def session(i):
        order = {"order_id": f"O{i}", "customer_id": f"C{i}"}
        events = [LLMTurn(calls=[ToolCall(call_id="a", tool="get_order", arguments={"order_id": f"O{i}"})]),
                  ToolResult(call_id="a", tool="get_order", content=json.dumps(order)),
                  LLMTurn(calls=[ToolCall(call_id="b", tool="get_customer", arguments={"customer_id": f"C{i}"})]),
                  ToolResult(call_id="b", tool="get_customer", content="{}")]
        return Session(header=SessionHeader(session_id=f"s{i}", harness="t"), events=events)

    manifest = ToolManifest.declare(reads=["get_order", "get_customer"])
    stretto = Stretto(learn_flow([session(i) for i in range(10)], manifest), reads=["get_order", "get_customer"],
                      store=False)
    live = stretto.session("live")
    calls = []
    def call_tool(name, args):
        calls.append([name, args])
        return json.dumps({"customer_id": args.get("customer_id")})
    text = live.after_tool_sync("c1", "get_order", {"order_id": "O42"}, json.dumps({"order_id": "O42", "customer_id": "C42"}), call_tool)
    live.close()
    print(json.dumps({"imported": imported, "sdk_needs_it": sdk_needs_it, "calls": calls, "appended": bool(text), "otel": otel() is not None,
                      "loaded": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
""")


def test_without_opentelemetry_the_adapters_import_and_a_flow_serves_as_before() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={"PYTHONPATH": f"{ROOT}:{ROOT / 'adapters'}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["otel"] is False and result["loaded"] == []
    assert result["calls"] == [["get_customer", {"customer_id": "C42"}]] and result["appended"]
    assert "stretto_langgraph" in result["imported"]  # its SDK runs without opentelemetry
    assert set(result["imported"]) | set(result["sdk_needs_it"]) == {
        "stretto_openai_agents", "stretto_langgraph", "stretto_claude", "stretto_mcp", "stretto_adk"}
