"""`stretto doctor` says what is installed and what to fix, and fails only on something broken."""

from __future__ import annotations

from stretto_core.cli import main
from stretto_core.cli.checks import run_checks


def test_a_fresh_home_needs_nothing_fixed(tmp_path, capsys):
    assert main(["doctor", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "python" in out and "store" in out and "Nothing to fix." in out


def test_an_unreadable_flow_is_something_to_fix(tmp_path, capsys):
    (tmp_path / "broken.flow.json").write_text("{not json", encoding="utf-8")
    assert main(["doctor", "--home", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FIX" in out and "broken.flow.json" in out and "To fix:" in out


def test_an_unreadable_session_file_is_something_to_fix(tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "x.jsonl").write_bytes(b"\xff\xfe garbage\n")
    store = next(c for c in run_checks(tmp_path) if c.what == "store")
    assert store.status == "fix" and "unreadable" in store.detail
