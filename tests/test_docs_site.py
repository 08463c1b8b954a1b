"""The docs site a user reads: each adapter page lists every option its code takes (generated at
build time, so it cannot go stale), and the tutorial's commands run verbatim on recorded sessions."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PAGES = {
    "quickstart/openai-agents.md": ["stretto_openai_agents:instrument"],
    "quickstart/adk.md": ["stretto_adk:StrettoPlugin"],
    "quickstart/langgraph.md": ["stretto_langgraph:StrettoMiddleware", "stretto_langgraph:StrettoToolWrapper"],
    "quickstart/claude.md": ["stretto_claude:claude_hooks"],
    "quickstart/proxy.md": ["stretto_mcp:StrettoFastMCPMiddleware"],
}
SDK = {"stretto_openai_agents": "agents", "stretto_adk": "google.adk", "stretto_langgraph": "langchain",
       "stretto_claude": "claude_agent_sdk", "stretto_mcp": "fastmcp"}


def hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "scripts" / "docs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def code_options(entry: str) -> set[str]:
    """Every keyword the callable takes, read from its signature and its typed **options."""
    package, name = entry.split(":")
    found = getattr(importlib.import_module(package), name)
    function = found.__init__ if inspect.isclass(found) else found
    names: set[str] = set()
    for key, parameter in inspect.signature(function).parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            typed = str(parameter.annotation).removeprefix("Unpack[").removesuffix("]")
            names |= set(vars(importlib.import_module(function.__module__))[typed].__annotations__)
        elif key not in ("self", "agent"):
            names.add(key)
    return names


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_adapter_option_is_on_its_page(page: str) -> None:
    for entry in PAGES[page]:
        pytest.importorskip(SDK[entry.split(":")[0]])
    rendered = hooks().on_page_markdown((DOCS / page).read_text(encoding="utf-8"))
    assert "stretto:options" not in rendered  # every marker became a table
    listed = set(re.findall(r"^\| `(\w+)` \|", rendered, flags=re.MULTILINE))
    for entry in PAGES[page]:
        missing = code_options(entry) - listed
        assert missing == set(), f"{page} does not list {sorted(missing)} of {entry}"


def test_a_page_without_its_marker_would_miss_the_options() -> None:
    pytest.importorskip("google.adk")
    page = (DOCS / "quickstart/adk.md").read_text(encoding="utf-8")
    stripped = re.sub(r"<!-- stretto:options \S+ -->", "", page)
    listed = set(re.findall(r"^\| `(\w+)` \|", hooks().on_page_markdown(stripped), flags=re.MULTILINE))
    assert code_options("stretto_adk:StrettoPlugin") - listed  # the check above has teeth


def bash_lines(page: Path) -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_tutorials_commands_run_verbatim_in_order(tmp_path: Path) -> None:
    lines = bash_lines(DOCS / "tutorial.md")
    assert [shlex.split(line)[:2] for line in lines] == [
        ["stretto", "demo"], ["stretto", "learn"], ["stretto", "flow"], ["stretto", "replay"]]
    stretto = str(Path(sys.executable).parent / "stretto")
    env = {**os.environ, "STRETTO_HOME": str(tmp_path / ".stretto")}
    for line in lines:
        words = shlex.split(line)
        done = subprocess.run([stretto, *words[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"{line}\n{done.stderr[-2000:]}"
    import json

    replay = json.loads(done.stdout)  # `--json -`: the replay alone on stdout
    assert replay["episodes"] == 60 and replay["turns_saved"] > 0
