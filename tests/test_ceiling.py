"""Table 1 for any set of sessions: turn classes per app and agent, and the `stretto ceiling` verb."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stretto_core.cli import main
from stretto_core.sessions.manifest import ToolManifest, save_manifest
from stretto_core.evaluate.measure.ceiling import ceiling_report, measure_session, render_table
from stretto_core.evaluate.measure.tables import markdown_table, pct_range
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage
from stretto_core.sessions.store import write_session

SHOP = ToolManifest.declare("shop", reads=["get_user", "get_order"], writes=["cancel_order"])


def call(n: int, tool: str, **arguments: Any) -> ToolCall:
    return ToolCall(call_id=f"c{n}", tool=tool, arguments=arguments)


def shop_session(sid: str, agent: str, *, app: str = "shop", task: str = "1", manifest: bool = True,
                 parallel: bool = False) -> Session:
    """A user asks; the agent reads the user (read), reads an order it names (ceiling), cancels
    it (write) and replies: one turn of each class."""
    orders = [call(2, "get_order", id="W1")] + ([call(3, "get_order", id="W2")] if parallel else [])
    events = [UserMessage(text="I am u1"),
              LLMTurn(calls=[call(1, "get_user", user_id="u1")]),
              ToolResult(call_id="c1", tool="get_user", content='{"orders": ["W1", "W2"]}'),
              LLMTurn(calls=orders)]
    events += [ToolResult(call_id=c.call_id, tool="get_order", content="{}") for c in orders]
    events += [LLMTurn(calls=[call(4, "cancel_order", id="W1")]),
               ToolResult(call_id="c4", tool="cancel_order", content="{}"),
               LLMTurn(text="Done.")]
    head = SessionHeader(session_id=sid, harness="test", agent_model=agent, app=app, task_id=task,
                         manifest=SHOP if manifest else None)
    return Session(header=head, events=events)


def test_each_turn_class_is_counted_once_per_turn() -> None:
    report = ceiling_report([measure_session(shop_session("a", "m1"), SHOP)])
    shop = report.rows[0]
    assert (shop.turns, shop.replies, shop.writes, shop.reads, shop.ceiling) == (4, 1, 1, 2, 1)
    assert shop.ceiling_share == 0.25 and shop.read_share == 0.5


def test_reads_include_the_turns_in_the_ceiling_so_the_classes_sum_to_all_turns() -> None:
    row = ceiling_report([measure_session(shop_session("a", "m1"), SHOP)]).rows[0]
    assert row.reply_share + row.write_share + row.read_share == pytest.approx(1.0)


def test_the_one_call_share_counts_ceiling_turns_with_a_single_call() -> None:
    items = [measure_session(shop_session("a", "m1"), SHOP),
             measure_session(shop_session("b", "m1", parallel=True), SHOP)]
    row = ceiling_report(items).rows[0]
    assert (row.ceiling, row.one_call_ceiling, row.one_call_share) == (2, 1, 0.5)


def test_an_app_row_pools_its_agents_and_gives_their_range() -> None:
    lean = shop_session("b", "m2")
    lean.events.append(LLMTurn(text="Anything else?"))
    items = [measure_session(shop_session("a", "m1"), SHOP), measure_session(lean, SHOP)]
    row = ceiling_report(items).rows[0]
    assert (row.sessions, row.agents, row.turns, row.ceiling) == (2, 2, 9, 2)
    assert (row.ranges["ceiling_share"].low, row.ranges["ceiling_share"].high) == (0.2, 0.25)


def test_the_all_row_pools_every_app_and_ranges_over_apps() -> None:
    items = [measure_session(shop_session("a", "m1", app="shop"), SHOP),
             measure_session(shop_session("b", "m1", app="store", parallel=True), SHOP)]
    report = ceiling_report(items)
    assert [r.app for r in report.rows] == ["shop", "store", "All"]
    assert (report.rows[-1].turns, report.rows[-1].agents, report.rows[-1].sessions) == (8, 1, 2)
    assert "ceiling_share" in report.rows[-1].ranges
    assert [(r.app, r.agent) for r in report.per_agent] == [("shop", "m1"), ("store", "m1"), ("All", "m1")]


def test_the_table_brackets_the_range_across_agents() -> None:
    assert pct_range(0.342, 0.29, 0.41) == "34.2% [29–41]"
    items = [measure_session(shop_session("a", "m1"), SHOP), measure_session(shop_session("b", "m2"), SHOP)]
    assert "25.0% [25–25]" in render_table(ceiling_report(items))


def test_a_markdown_table_right_aligns_the_columns_it_is_told_to() -> None:
    table = markdown_table([{"name": "retail", "n": 14106}], {"App": "name", "Turns": "n"}, right=["Turns"])
    assert table.splitlines() == ["| App    |  Turns |", "|--------|-------:|", "| retail | 14,106 |"]


def run(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_ceiling_verb_prints_table_one_and_writes_the_same_figures_as_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for sid, agent in (("a", "m1"), ("b", "m2")):
        write_session(shop_session(sid, agent), tmp_path / "sessions")
    code, out, _ = run("ceiling", str(tmp_path / "sessions"), "--json", str(tmp_path / "t.json"), capsys=capsys)
    assert code == 0
    assert "| shop " in out and "| All " in out and "25.0%" in out
    data = json.loads((tmp_path / "t.json").read_text())
    assert data["rows"][0]["ceiling"] == 2 and data["rows"][0]["turns"] == 8
    assert {r["agent"] for r in data["per_agent"]} == {"m1", "m2"}


def test_a_session_without_a_manifest_is_an_error_naming_its_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_session(shop_session("bare", "m1", manifest=False), tmp_path)
    code, _, err = run("ceiling", str(tmp_path), capsys=capsys)
    assert code == 2 and str(path) in err and "--manifest" in err and "Traceback" not in err


def test_a_manifest_given_on_the_command_line_classes_sessions_without_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_session(shop_session("bare", "m1", manifest=False), tmp_path / "s")
    save_manifest(SHOP, tmp_path / "shop.json")
    code, out, _ = run("ceiling", str(tmp_path / "s"), "--manifest", str(tmp_path / "shop.json"), capsys=capsys)
    assert code == 0 and "25.0%" in out


def test_the_split_option_keeps_only_that_sides_sessions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_session(shop_session("tr", "m1", task="1"), tmp_path / "s")
    write_session(shop_session("te", "m1", task="2"), tmp_path / "s")
    (tmp_path / "split.json").write_text(json.dumps({"train": ["1"], "test": ["2"]}))
    code, _, _ = run("ceiling", str(tmp_path / "s"), "--split", "test", "--split-file", str(tmp_path / "split.json"),
                     "--json", str(tmp_path / "t.json"), capsys=capsys)
    assert code == 0 and json.loads((tmp_path / "t.json").read_text())["rows"][0]["sessions"] == 1


def test_a_path_that_does_not_exist_is_an_error_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run("ceiling", str(tmp_path / "nowhere"), capsys=capsys)
    assert code == 2 and "nowhere" in err


def test_the_split_verb_writes_a_file_that_keeps_train_and_test_apart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for t in range(20):
        write_session(shop_session(f"s{t}", "m1", app="agentdojo/travel", task=f"user_task_{t}"), tmp_path / "s")
    code, out, _ = run("split", str(tmp_path / "s"), "--out", str(tmp_path / "split.json"), capsys=capsys)
    data = json.loads((tmp_path / "split.json").read_text())["apps"]["agentdojo/travel"]
    assert code == 0 and "agentdojo/travel" in out
    assert set(data["train"]).isdisjoint(data["test"]) and len(data["train"]) + len(data["test"]) == 20


def test_an_agent_with_fewer_sessions_than_asked_is_left_out_of_the_range_but_not_the_pool() -> None:
    items = [measure_session(shop_session(f"a{i}", "m1"), SHOP) for i in range(3)]
    lean = shop_session("b", "m2")
    lean.events.append(LLMTurn(text="Anything else?"))
    row = ceiling_report(items + [measure_session(lean, SHOP)], range_min_sessions=2).rows[0]
    assert row.sessions == 4 and row.ranges == {}


def test_solo_sessions_get_a_row_of_their_own() -> None:
    solo = shop_session("s", "m1")
    solo.header.solo = True
    report = ceiling_report([measure_session(shop_session("a", "m1"), SHOP), measure_session(solo, SHOP)])
    assert [r.app for r in report.rows] == ["shop", "shop (solo)", "All"]


def test_with_the_users_words_the_ceiling_can_only_grow() -> None:
    row = ceiling_report([measure_session(shop_session("a", "m1"), SHOP)]).rows[0]
    assert row.with_user_words >= row.ceiling


def test_a_folder_with_no_sessions_on_the_asked_side_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_session(shop_session("tr", "m1", task="1"), tmp_path / "s")
    (tmp_path / "split.json").write_text(json.dumps({"train": ["1"]}))
    code, _, err = run("ceiling", str(tmp_path / "s"), "--split", "test", "--split-file", str(tmp_path / "split.json"),
                       capsys=capsys)
    assert code == 2 and "no sessions" in err and "test side" in err
