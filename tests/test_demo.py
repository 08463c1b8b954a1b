"""The embedded demo runs the whole pipeline, and its live run agrees with the replay."""

from __future__ import annotations

from pathlib import Path

from stretto_core.cli import main
from stretto_core.demo.run import demo
from stretto_core.sessions.store import load_sessions


def test_the_live_savings_of_the_scripted_agent_are_what_the_replay_predicted(tmp_path: Path) -> None:
    numbers = demo(tmp_path, sessions=30, train=20)
    replay = numbers["replay"]["use"]
    live = numbers["live"]
    assert live["llm_turns_without"] == replay["llm_turns"]
    assert replay["turns_saved"] > 0
    assert live["llm_turns_without"] - live["llm_turns_with"] == replay["turns_saved"]


def test_the_demo_records_every_live_lookup_in_the_session_files(tmp_path: Path) -> None:
    numbers = demo(tmp_path, sessions=24, train=16)
    live = load_sessions([tmp_path / "live"])
    recorded = sum(1 for s in live for e in s.events if e.kind == "lookup")
    assert recorded == numbers["live"]["lookups"] > 0


def test_the_demo_verb_prints_the_savings(tmp_path: Path, capsys) -> None:
    assert main(["demo", "--home", str(tmp_path), "--sessions", "20", "--train", "14"]) == 0
    out = capsys.readouterr().out
    assert "LLM turns" in out and (tmp_path / "shop.flow.json").exists() and (tmp_path / "demo.json").exists()
