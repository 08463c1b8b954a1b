"""What install.md promises about versions is what the project declares and checks: each SDK
extra's floor is the same in pyproject.toml, requirements-floors.txt (the floors leg,
`bash scripts/test-floors.sh`) and the docs' matrix; and the code an install on Python 3.10 gets
(the core, the OpenAI Agents, Claude and MCP adapters) uses nothing newer than 3.10 (vermin's
static check: no 3.10 interpreter is on these machines, so it is not a 3.10 run)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SDKS = ("openai-agents", "google-adk", "langgraph", "langchain", "langchain-core", "claude-agent-sdk", "mcp", "fastmcp")


def pyproject_floors() -> dict[str, str]:
    """The `>=` floor of each SDK in the extras (the same floor wherever an SDK appears)."""
    text = (ROOT / "pyproject.toml").read_text()
    extras = text[text.index("[project.optional-dependencies]"):text.index("[project.scripts]")]
    found: dict[str, set[str]] = {}
    for name, floor in re.findall(r'"([A-Za-z0-9_.-]+)>=([0-9.]+)', extras):
        if name in SDKS:
            found.setdefault(name, set()).add(floor)
    assert all(len(v) == 1 for v in found.values()), f"an SDK has two floors: {found}"
    return {name: floors.pop() for name, floors in found.items()}


def pinned() -> dict[str, str]:
    text = (ROOT / "requirements-floors.txt").read_text()
    return dict(re.findall(r"^([A-Za-z0-9_.-]+)==([0-9.]+)$", text, re.M))


def same(floor: str, pin: str) -> bool:
    """2.12 and 2.12.0 are one floor."""
    pad = lambda v: [int(p) for p in v.split(".")] + [0] * (3 - len(v.split(".")))  # noqa: E731
    return pad(floor) == pad(pin)


def test_the_floors_leg_pins_exactly_pyprojects_floors() -> None:
    floors, pins = pyproject_floors(), pinned()
    assert set(floors) == set(pins) == set(SDKS)
    assert [n for n in SDKS if not same(floors[n], pins[n])] == []


def test_the_install_page_states_each_floor_the_leg_tested() -> None:
    page = (ROOT / "docs" / "install.md").read_text()
    page = page[page.index("| extra | what it adds |"):page.index("### The floors leg")]  # the matrix
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z-]+)` \|[^|]*\| ([^|]*) \|", page, re.M)}
    where = {"openai-agents": "openai-agents", "google-adk": "adk", "langgraph": "langgraph", "langchain": "langgraph",
             "langchain-core": "langgraph", "claude-agent-sdk": "claude", "mcp": "mcp", "fastmcp": "fastmcp"}
    for sdk, pin in pinned().items():
        assert f"{sdk} {pin}" in rows[where[sdk]], f"docs/install.md's `{where[sdk]}` row does not say {sdk} {pin}"


def vermin() -> str:
    """vermin's command, beside this interpreter (it has no `python -m` entry)."""
    pytest.importorskip("vermin", reason="vermin is a test dependency (pip install '.[test]')")
    return str(Path(sys.executable).parent / "vermin")


def test_the_code_a_python_310_install_gets_needs_nothing_newer() -> None:
    parts = ["stretto_core", "stretto", "adapters/stretto_openai_agents", "adapters/stretto_claude", "adapters/stretto_mcp"]
    done = subprocess.run([vermin(), "--no-tips", "-t=3.10-", "--violations", "--eval-annotations",
                           "--backport", "typing_extensions", *parts], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]


def test_the_checker_would_catch_a_311_only_api(tmp_path: Path) -> None:
    (tmp_path / "new.py").write_text("import tomllib\n")
    done = subprocess.run([vermin(), "--no-tips", "-t=3.10-", "--violations", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "tomllib" in done.stdout
