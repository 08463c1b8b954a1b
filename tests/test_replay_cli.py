"""`stretto replay` end to end: learn a flow from sessions, replay others, read the JSON back."""

from __future__ import annotations

import json

from stretto_core.cli import main
from stretto_core.flow.ir import learn, save_flow
from stretto_core.evaluate.replay.inputs import load_replay
from stretto_core.sessions.store import write_session
from test_replay_api import sessions

TOTALS = ("episodes", "llm_turns", "turns_saved", "detours", "lookups", "ceiling_turns")


def learned_flow(tmp_path):
    path = tmp_path / "shop.flow.json"
    save_flow(learn(sessions(30)), path)
    return path


def test_the_replay_command_prints_a_summary_and_writes_totals_and_rows(tmp_path, capsys) -> None:
    flow = learned_flow(tmp_path)
    for session in sessions(8):
        write_session(session, tmp_path / "sessions")
    out = tmp_path / "out" / "replay.json"
    code = main(["replay", "--flow", str(flow), "--sessions", str(tmp_path / "sessions"), "--json", str(out),
                 "--weigh"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Turns saved" in printed and "Share of ceiling" in printed
    data = json.loads(out.read_text())
    assert all(isinstance(data[k], int) for k in TOTALS) and data["episodes"] == 8
    assert data["turns_saved"] > 0 and data["weighed_rows"]
    assert load_replay(out).turns_saved == data["turns_saved"]


def test_the_replay_command_keeps_one_side_of_the_split(tmp_path, capsys) -> None:
    flow = learned_flow(tmp_path)
    for n, session in enumerate(sessions(4)):
        session.header.labels["split"] = "test" if n % 2 else "train"
        write_session(session, tmp_path / "sessions")
    out = tmp_path / "replay.json"
    assert main(["replay", "--flow", str(flow), "--sessions", str(tmp_path / "sessions"), "--split", "test",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["episodes"] == 2 and data["config"]["split"] == "test"


def test_the_replay_command_names_a_session_file_it_cannot_read(tmp_path, capsys) -> None:
    flow = learned_flow(tmp_path)
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "bad.jsonl").write_text('{"not": "a header"}\n')
    code = main(["replay", "--flow", str(flow), "--sessions", str(tmp_path / "sessions" / "bad.jsonl"),
                 "--json", str(tmp_path / "r.json")])
    assert code == 2
    assert "bad.jsonl:1: the first line is not a stretto session header" in capsys.readouterr().err
