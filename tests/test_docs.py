"""The docs a user navigates: the CLI reference is current, every page is in the nav, the site builds."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stretto_core.cli.reference import render_reference

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"


def test_the_cli_reference_is_generated_from_the_cli_as_it_is():
    committed = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert committed == render_reference(), "docs/cli.md is stale: python -m stretto_core.cli.reference > docs/cli.md"


def test_every_page_is_in_the_navigation():
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert [p for p in pages if p not in nav] == []


def test_the_site_builds_with_no_warning(tmp_path):
    if shutil.which("mkdocs") is None and not (Path(sys.executable).parent / "mkdocs").exists():
        pytest.skip("mkdocs is not installed (it is in the test extra)")
    mkdocs = shutil.which("mkdocs") or str(Path(sys.executable).parent / "mkdocs")
    done = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
