"""When either side misbehaves, the proxy says what happened, exits with a clear status, never
leaves the host waiting, and leaves a readable session behind."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from proxy_support import proxy_command, read_session_files, toy_flow, toy_server_command

pytest.importorskip("mcp")

WAIT = 20.0
"""Seconds a test waits for the proxy before it calls it hung (far above what any step takes)."""


class RawHost:
    """A host that speaks JSON-RPC lines to `stretto proxy` itself, so it can send anything."""

    def __init__(self, tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> None:
        flow = toy_flow(tmp_path / "toy.flow.json")
        self.store = tmp_path / "s"
        command = proxy_command(toy_server_command(), "--flow", str(flow), "--store", str(self.store), *options)
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
        self.lines: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        self.answer(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(json.loads(line))

    def send(self, message: dict[str, Any] | str) -> None:
        assert self.process.stdin is not None
        text = message if isinstance(message, str) else json.dumps(message)
        self.process.stdin.write((text + "\n").encode())
        self.process.stdin.flush()

    def call(self, request_id: int, tool: str, arguments: dict[str, Any] | None = None) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments or {}}})

    def answer(self, request_id: Any) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            for line in self.lines:
                if line.get("id") == request_id and "method" not in line:
                    return line
            time.sleep(0.01)
        raise AssertionError(f"the proxy left request {request_id!r} unanswered")

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def finish(self) -> tuple[int, str]:
        """The proxy's exit status and what it said on stderr."""
        try:
            self.process.stdin.close()  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError):
            pass
        status = self.process.wait(timeout=WAIT)
        return status, self.process.stderr.read().decode()  # type: ignore[union-attr]

    def session(self) -> Any:
        [session] = read_session_files(self.store)
        return session


def test_malformed_json_rpc_from_the_host_is_answered_with_a_parse_error_and_the_proxy_goes_on(tmp_path: Path) -> None:
    host = RawHost(tmp_path)
    host.send("{this is not json")
    host.send({"jsonrpc": "1.0", "id": 7, "method": "tools/list"})
    host.call(8, "get_order", {"order_id": "O1"})
    assert len(host.answer(8)["result"]["content"]) == 2
    errors = [line for line in host.lines if "error" in line]
    assert [e["error"]["code"] for e in errors] == [-32700, -32600] and errors[1]["id"] == 7
    status, stderr = host.finish()
    assert status == 6 and "the host sent a message that is not JSON-RPC (not JSON" in stderr
    assert [e.kind for e in host.session().events] == ["llm_turn", "tool_result", "lookup"]


def test_a_malformed_answer_from_the_server_becomes_an_error_for_the_host(tmp_path: Path) -> None:
    host = RawHost(tmp_path)
    host.call(1, "garbage")
    answer = host.answer(1)
    assert answer["error"]["code"] == -32603 and "malformed" in answer["error"]["message"]
    host.call(2, "get_order", {"order_id": "O2"})
    assert "result" in host.answer(2)
    status, stderr = host.finish()
    assert status == 6 and "the server sent a message that is not JSON-RPC" in stderr
    assert [e.kind for e in host.session().events][-3:] == ["llm_turn", "tool_result", "lookup"], host.session().events


def test_a_server_that_crashes_mid_call_gives_the_host_an_error_and_the_proxy_exits_3(tmp_path: Path) -> None:
    host = RawHost(tmp_path)
    host.call(1, "get_order", {"order_id": "O1"})
    host.answer(1)
    host.call(2, "crash")
    answer = host.answer(2)
    assert answer["error"]["code"] == -32000 and "exited with status 7" in answer["error"]["message"]
    status, stderr = host.finish()
    assert status == 3 and "the server went away with 1 request(s) in flight: it exited with status 7" in stderr
    events = host.session().events
    assert [e.kind for e in events] == ["llm_turn", "tool_result", "lookup", "llm_turn"]
    assert events[-1].calls[0].tool == "crash"


def test_a_host_that_disconnects_mid_call_is_cancelled_at_the_server_and_the_proxy_exits_4(tmp_path: Path) -> None:
    host = RawHost(tmp_path)
    host.call(1, "get_order", {"order_id": "O1"})
    host.answer(1)
    host.call(2, "slow", {"seconds": 5})
    time.sleep(0.3)
    host.close_stdin()
    status, stderr = host.finish()
    assert status == 4 and "the host disconnected with 1 request(s) in flight (tools/call)" in stderr
    events = host.session().events
    assert [e.kind for e in events] == ["llm_turn", "tool_result", "lookup", "llm_turn"]


def test_a_server_that_hangs_is_stopped_and_the_host_gets_an_error_not_a_wait(tmp_path: Path) -> None:
    host = RawHost(tmp_path, "--server-timeout", "1")
    host.call(1, "hang")
    answer = host.answer(1)
    assert answer["error"]["code"] == -32000 and "has not answered tools/call" in answer["error"]["message"]
    status, stderr = host.finish()
    assert status == 5 and "taking it as hung and stopping it" in stderr
    assert [e.kind for e in host.session().events] == ["llm_turn"]


def test_a_lookup_that_hangs_leaves_the_agents_result_unchanged_and_is_recorded_as_failed(tmp_path: Path) -> None:
    host = RawHost(tmp_path, "--lookup-timeout", "0.5", env={"TOY_SLOW_CUSTOMER": "30"})
    host.call(1, "get_order", {"order_id": "O1"})
    content = host.answer(1)["result"]["content"]
    assert json.loads(content[0]["text"]) == {"order_id": "O1", "customer_id": "C7", "status": "shipped"}
    assert len(content) == 1  # a lookup stretto gave up on is recorded, never shown to the agent
    host.call(2, "seen")
    assert "notifications/cancelled" in json.loads(host.answer(2)["result"]["content"][0]["text"])["seen"]
    status, _ = host.finish()
    assert status == 0
    [lookup] = [e for e in host.session().events if e.kind == "lookup"]
    assert lookup.tool == "get_customer" and lookup.error and lookup.abandoned and "abandoned" in lookup.content
