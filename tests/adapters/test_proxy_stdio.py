"""The proxy with stdio that is not a pair of pipes: /dev/null as stdin ends it at once, and a file
of requests (or a file as stdout) gets every answer, with no traceback (issue 26, item 12)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from proxy_support import proxy_command, toy_flow, toy_server_command  # noqa: E402
from stretto_mcp.scripted import same_code_env  # noqa: E402

REQUESTS: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_order", "arguments": {"order_id": "O1"}}},
]


def _proxy(tmp_path: Path, stdin: Any, stdout: Any) -> subprocess.CompletedProcess:
    command = proxy_command(toy_server_command(), "--flow", str(toy_flow(tmp_path / "toy.flow.json")),
                            "--store", str(tmp_path / "sessions"))
    return subprocess.run(command, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=same_code_env(),
                          timeout=60)


def _answers(text: str) -> dict[Any, dict[str, Any]]:
    return {m.get("id"): m for m in map(json.loads, text.splitlines()) if "id" in m}


def test_stdin_at_dev_null_ends_the_proxy_at_once_and_cleanly(tmp_path: Path) -> None:
    with open("/dev/null", "rb") as stdin:
        done = _proxy(tmp_path, stdin, subprocess.PIPE)
    assert done.returncode == 0, done.stderr.decode()[-800:]
    assert b"Traceback" not in done.stderr and done.stdout == b""


def test_a_file_of_requests_written_to_a_file_gets_every_answer(tmp_path: Path) -> None:
    given, out = tmp_path / "host.jsonl", tmp_path / "out.jsonl"
    given.write_text("".join(json.dumps(m) + "\n" for m in REQUESTS))
    with open(given, "rb") as stdin, open(out, "wb") as stdout:
        done = _proxy(tmp_path, stdin, stdout)
    assert done.returncode == 0, done.stderr.decode()[-800:]
    assert b"Traceback" not in done.stderr
    answers = _answers(out.read_text())
    assert sorted(answers) == [1, 2, 3]
    assert "O1" in json.dumps(answers[3]["result"])


def test_requests_on_a_pipe_answered_into_a_file_lose_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    text = "".join(json.dumps(m) + "\n" for m in REQUESTS).encode()
    command = proxy_command(toy_server_command(), "--no-record")
    with open(out, "wb") as stdout:
        done = subprocess.run(command, input=text, stdout=stdout, stderr=subprocess.PIPE, env=same_code_env(),
                              timeout=60)
    assert b"Traceback" not in done.stderr, done.stderr.decode()[-800:]
    assert done.returncode == 0, done.stderr.decode()[-800:]
    assert sorted(_answers(out.read_text())) == [1, 2, 3]
