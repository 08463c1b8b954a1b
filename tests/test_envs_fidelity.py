"""Comparing replayed results with the record, and reading a recording's AgentDojo data revision.

None of these need a benchmark package: the environment is a stand-in that answers from a table.
"""

from __future__ import annotations

from typing import Any

from stretto_core.evaluate.envs.agentdojo_data import data_revision, infer_data_revision
from stretto_core.evaluate.envs.fidelity import SourceTally, replay_recorded_calls, same_result
from stretto_core.evaluate.envs.recordings import label_agentdojo_data, source_name
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage


class TableEnvironment:
    """Answers each call from a table, and remembers who asked."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.requestors: list[str] = []

    def call(self, tool: str, arguments: dict[str, Any], requestor: str = "agent") -> tuple[str, bool]:
        self.requestors.append(requestor)
        return self.answers.get(tool, "Error: no such tool"), tool not in self.answers


def session_with(results: list[tuple[str, str]], app: str = "agentdojo/banking",
                 source_file: str = "gpt-4o/banking/user_task_0.json") -> Session:
    events: list[Any] = []
    for n, (tool, content) in enumerate(results):
        events.append(LLMTurn(calls=[ToolCall(call_id=f"c{n}", tool=tool)]))
        events.append(ToolResult(call_id=f"c{n}", tool=tool, content=content))
    header = SessionHeader(session_id=f"s-{source_file}", harness="test", app=app,
                           labels={"source_file": source_file})
    return Session(header=header, events=events)


def test_a_sent_emails_timestamp_is_not_a_difference() -> None:
    assert same_result("timestamp: 2024-06-05 09:06:47.895907", "timestamp: 2026-11-29 20:01:02.123456")


def test_a_whole_number_passed_as_an_int_or_a_float_is_not_a_difference() -> None:
    assert same_result("Transaction to X for 10000 sent.", "Transaction to X for 10000.0 sent.")


def test_pydantics_docs_url_version_is_not_a_difference() -> None:
    assert same_result("visit https://errors.pydantic.dev/2.7/v/missing",
                       "visit https://errors.pydantic.dev/2.12/v/missing")


def test_the_order_of_a_sets_lines_is_not_a_difference() -> None:
    assert same_result("participants:\n- a@x.com\n- b@x.com", "participants:\n- b@x.com\n- a@x.com")


def test_a_different_value_is_a_difference() -> None:
    assert not same_result("status: sent", "status: received")
    assert not same_result("balance: 1810.5", "balance: 1810.0")


def test_replay_runs_each_recorded_call_in_order_and_counts_what_differs() -> None:
    session = session_with([("get_balance", "1810.0"), ("get_iban", "DE89"), ("read_file", "old bill")])
    env = TableEnvironment({"get_balance": "1810.0", "get_iban": "DE89", "read_file": "new bill"})
    tally = SourceTally()
    tally.add(replay_recorded_calls(session, env))
    assert (tally.calls, tally.identical, tally.masked) == (3, 2, 2)
    assert tally.examples[0]["tool"] == "read_file"


def test_the_users_own_calls_are_replayed_as_the_users() -> None:
    call = ToolCall(call_id="u1", tool="check_status_bar")
    session = Session(
        header=SessionHeader(session_id="s", harness="test", app="tau2/telecom"),
        events=[UserMessage(calls=[call]), ToolResult(call_id="u1", tool="check_status_bar", content="ok")],
    )
    env = TableEnvironment({"check_status_bar": "ok"})
    replay_recorded_calls(session, env)
    assert env.requestors == ["user"]


def test_a_call_the_harness_never_answered_is_not_replayed() -> None:
    session = session_with([("get_balance", "1810.0")])
    session.events.append(LLMTurn(calls=[ToolCall(call_id="late", tool="send_money")]))
    env = TableEnvironment({"get_balance": "1810.0"})
    replay_recorded_calls(session, env)
    assert env.requestors == ["agent"]


def test_a_result_a_defence_model_wrote_is_counted_apart() -> None:
    session = session_with([("read_file", "<Data omitted because a prompt injection was detected>")])
    tally = SourceTally()
    tally.add(replay_recorded_calls(session, TableEnvironment({"read_file": "the bill"})))
    assert (tally.calls, tally.by_defence) == (0, 1)


def test_a_benchmark_version_maps_to_the_data_its_packages_shipped() -> None:
    assert [data_revision(v) for v in ("v1", "v1.1", "v1.1.2", "v1.2.1", "v1.2.2", None)] == [
        "v1", "v1", "v1.1.1", "v1.2", "v1.2.2", "v1.2.2"]


def test_the_data_revision_is_read_from_the_entries_a_pipelines_results_show() -> None:
    assert infer_data_revision(["date: 2022-0 3-04"]) == "v1"
    assert infer_data_revision(["date: '2022-03-04'", "team-meeting-minutes.docx team meeting minutes\n"]) == "v1.1.1"
    assert infer_data_revision(["team meeting minutes Hawaii", "Car Rental\t\t98.70 -----"]) == "v1.2"
    assert infer_data_revision(["nothing that tells"]) is None


def test_every_session_of_a_pipeline_gets_the_revision_its_pipeline_shows() -> None:
    telling = session_with([("get_most_recent_transactions", "date: 2022-0 3-04")],
                           source_file="gpt-4o/banking/user_task_1.json")
    silent = session_with([("get_channels", "- general")], app="agentdojo/slack",
                          source_file="gpt-4o/slack/user_task_0.json")
    other = session_with([("get_channels", "- general")], app="agentdojo/slack",
                         source_file="claude/slack/user_task_0.json")
    labelled = label_agentdojo_data([telling, silent, other])
    assert [source_name(s.header) for s in labelled] == ["gpt-4o", "gpt-4o", "claude"]
    assert [s.header.labels.get("agentdojo_data") for s in labelled] == ["v1", "v1", None]
