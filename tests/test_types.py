"""Type checkers see stretto's public API and each adapter's options: mypy reports a user's
misused option (`theta="x"`, `reads=3`) in every adapter, and the examples check clean."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SDKS = ["agents", "google", "langchain", "langchain_core", "langgraph", "claude_agent_sdk", "mcp", "fastmcp",
        "mcp_types", "openai"]
"""The SDKs' own sources are not type-checked here (slow, and not ours): their names are `Any`."""

MISUSES = '''\
import stretto
from agents import Agent
from stretto_adk import StrettoPlugin
from stretto_claude import claude_hooks
from stretto_langgraph import StrettoMiddleware, StrettoToolWrapper
from stretto_mcp import StrettoFastMCPMiddleware
from stretto_openai_agents import instrument

StrettoMiddleware("a.flow.json", theta="x")
StrettoToolWrapper("a.flow.json", reads=3)
claude_hooks("a.flow.json", reads=3)
StrettoPlugin("a.flow.json", theta="x")
instrument(Agent(name="a"), "a.flow.json", reads=3)
StrettoFastMCPMiddleware("a.flow.json", per_call="2")
stretto.Stretto("a.flow.json", theta="x")
flow: int = stretto.load_flow("a.flow.json")
'''


def mypy(tmp_path: Path, *files: Path) -> str:
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nfollow_imports = silent\nwarn_unused_configs = False\n"
                      f"cache_dir = {tmp_path / 'cache'}\n\n"
                      f"[mypy-{','.join(f'{m}.*' for m in SDKS)}]\nfollow_imports = skip\n", encoding="utf-8")
    # the repository's own packages (an editable install is an import hook mypy cannot follow)
    env = {**os.environ, "MYPYPATH": os.pathsep.join([str(REPO), str(REPO / "adapters")])}
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), *map(str, files)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    return done.stdout + done.stderr


def test_mypy_reports_each_misused_option_in_every_adapter_and_the_public_api(tmp_path):
    user = tmp_path / "user_app.py"
    user.write_text(MISUSES, encoding="utf-8")
    out = mypy(tmp_path, user)
    errors = {int(m.group(1)): m.group(2) for m in re.finditer(r"user_app\.py:(\d+): error: (.*)", out)}
    wrong = {n: line for n, line in enumerate(MISUSES.splitlines(), 1) if "(" in line and "import" not in line}
    assert sorted(errors) == sorted(wrong), out
    assert 'Argument "theta" to "StrettoMiddleware" has incompatible type "str"; expected "float"' in errors[9]
    assert 'Argument "reads" to "claude_hooks" has incompatible type "int"; expected "Iterable[str]"' in errors[11]
    assert '"Flow", variable has type "int"' in errors[16]  # the public API's names are typed, not Any
    assert "import-untyped" not in out and "import-not-found" not in out


def test_the_examples_type_check_clean(tmp_path):
    out = mypy(tmp_path, *sorted((REPO / "examples").glob("*.py")))
    assert "Success: no issues found" in out, out
