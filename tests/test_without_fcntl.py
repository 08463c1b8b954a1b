"""stretto imports and records where `fcntl` is missing (Windows): a portable file lock (issue 26, item 16).

Each check runs in a fresh Python where `fcntl` cannot be imported. The SDKs are imported first,
as they are on Windows (where their own POSIX-only imports are skipped), so only stretto's own
imports meet the missing module.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SDKS = {"stretto_openai_agents": "agents", "stretto_langgraph": "langgraph", "stretto_adk": "google.adk",
        "stretto_claude": "claude_agent_sdk", "stretto_mcp": "mcp"}

RECORD = """
import json, sys
from pathlib import Path
from stretto_core import Stretto, ToolManifest, read_session
from stretto_core.sessions import filelock
stretto = Stretto(None, store=sys.argv[1], reads=["get_order"])
live = stretto.session("s1", tools=ToolManifest.declare(reads=["get_order"]))
live.after_tool_sync("c1", "get_order", {"order_id": "O1"}, json.dumps({"status": "shipped"}), lambda t, a: "")
live.close()
[path] = Path(sys.argv[1]).glob("*.jsonl")
print(filelock.KIND, [e.kind for e in read_session(path).events])
"""


def _without_fcntl(code: str, *args: str, first: str = "") -> subprocess.CompletedProcess:
    prelude = (f"import {first}\n" if first else "") + "import sys\nsys.modules['fcntl'] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + code, *args], capture_output=True, text=True)


def test_the_core_records_a_session_without_fcntl(tmp_path: Path) -> None:
    done = _without_fcntl(RECORD, str(tmp_path))
    assert done.returncode == 0, done.stderr
    kind, events = done.stdout.split(" ", 1)
    assert kind in ("msvcrt", "none") and "tool_result" in events


@pytest.mark.parametrize("adapter", sorted(SDKS))
def test_every_adapter_imports_without_fcntl(adapter: str) -> None:
    if importlib.util.find_spec(SDKS[adapter].split(".")[0]) is None:
        pytest.skip(f"{SDKS[adapter]} is not installed")
    done = _without_fcntl(f"import {adapter}\nprint('ok')", first=SDKS[adapter])
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
