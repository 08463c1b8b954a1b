"""`stretto learn DIR` on sessions an app recorded (no task label) learns from all of them; where
tasks are labelled, only their train side is learned, and the output says which."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_sessions import app_stretto, serve_app
from stretto_core.cli import main
from stretto_core.demo.builtin import serve_customers
from stretto_core.flow.ir import load_flow


def learn(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["learn", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def data_sessions(path: Path) -> int:
    return sum(s.sessions for s in load_flow(path).provenance.sources if s.role == "data")


def test_sessions_an_app_recorded_are_all_learned_from_with_no_flags(tmp_path: Path, capsys) -> None:
    serve_app(app_stretto(tmp_path / "flow.json", tmp_path / "sessions"), range(6))
    code, out, err = learn(capsys, str(tmp_path / "sessions"), "--out", str(tmp_path / "flow.json"))
    assert code == 0, err
    assert "split auto: 6 sessions with no task label, all learned from" in out
    assert data_sessions(tmp_path / "flow.json") == 6


def test_labelled_tasks_keep_to_their_train_side_beside_unlabelled_sessions(tmp_path: Path, capsys) -> None:
    serve_customers(tmp_path / "labelled", range(20), "bench")
    code, out, err = learn(capsys, str(tmp_path / "labelled"), "--out", str(tmp_path / "train.json"),
                           "--split", "train")
    assert code == 0, err
    train = data_sessions(tmp_path / "train.json")
    assert 0 < train < 20, "the seeded split holds some tasks out"
    serve_app(app_stretto(None, tmp_path / "labelled"), range(3), "app")
    code, out, err = learn(capsys, str(tmp_path / "labelled"), "--out", str(tmp_path / "auto.json"))
    assert code == 0, err
    assert data_sessions(tmp_path / "auto.json") == train + 3
    assert f"3 sessions with no task label, all learned from; {train} with a task label, on the train side" in out


def test_no_session_on_the_train_side_says_so_in_one_line(tmp_path: Path, capsys) -> None:
    serve_customers(tmp_path / "s", range(20), "bench")
    code, _, err = learn(capsys, str(tmp_path / "s"), "--out", str(tmp_path / "f.json"), "--split", "none")
    assert code != 0 and "on the none side" in err
