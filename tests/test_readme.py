"""The README as a user reads it: its commands exist, name real flags and files, and the quick ones run."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from shared_data import published_data
from stretto_core.cli.reference import render_reference
from stretto_core.paths import data_root
from stretto_core.cli.verbs import VERBS

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
QUICK_SECTION = "## On recorded sessions"


def bash_lines(text: str) -> list[str]:
    """Every command line of the README's bash blocks, comments cut."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if command:
                lines.append(command)
    return lines


def section(title: str) -> str:
    start = README.index(title)
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def test_the_readme_starts_with_the_setup_and_the_test_command_ci_runs():
    first, second = bash_lines(README)[:2]
    assert first.startswith("python3 -m venv .venv") and first.endswith(".venv/bin/stretto demo")
    assert second == "bash scripts/test.sh"
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_first_command_installs_the_sdk_the_demo_runs_in_and_the_docs_give_the_same_one():
    first = bash_lines(README)[0]
    assert '.venv/bin/pip install -q ".[openai-agents]"' in first
    assert first in (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(d.startswith("openai-agents") for d in extras["openai-agents"])  # what stretto_openai_agents/demo.py imports


def test_every_stretto_command_names_a_verb_and_options_it_has():
    reference = render_reference()
    checked = 0
    for line in bash_lines(README):
        if not line.startswith(".venv/bin/stretto"):
            continue
        words = shlex.split(line.split("&&")[-1] if "&&" in line else line)
        verb = words[1]
        assert verb in VERBS, line
        page = reference[reference.index(f"## `stretto {verb}`"):]
        page = page[:page.find("\n## ", 1)]
        for flag in (w for w in words[2:] if w.startswith("--")):
            assert f"`{flag}`" in page, f"{flag} is not an option of stretto {verb}: {line}"
        checked += 1
    assert checked >= 8


def test_every_script_and_example_the_readme_runs_exists():
    paths = [w for line in bash_lines(README) for w in shlex.split(line) if w.endswith((".py", ".sh"))]
    assert paths and [p for p in paths if not (REPO / p).exists()] == []


@published_data
def test_the_commands_on_recorded_sessions_run_verbatim_in_order(tmp_path):
    checkout = tmp_path / "checkout"  # ../shared/data beside it, as beside a clone
    checkout.mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data_root().resolve())
    for line in bash_lines(section(QUICK_SECTION)):
        assert line.startswith(".venv/bin/stretto "), line
        argv = [sys.executable, "-m", "stretto_core", *shlex.split(line)[1:]]
        done = subprocess.run(argv, cwd=checkout, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{line}\n{done.stderr[-1500:]}"
    assert (checkout / ".stretto" / "replay.json").exists()
