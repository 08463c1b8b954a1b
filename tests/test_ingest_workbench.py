"""WorkBench result rows become sessions, read from LangChain reprs without evaluating anything."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import pytest

from shared_data import full_data
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.ingest.common import ManifestSource
from stretto_core.sessions.ingest.pyrepr import ReprError, parse_agent_run
from stretto_core.sessions.ingest.workbench import convert, name_parts, task_id_of
from stretto_core.paths import data_root
from stretto_core.sessions.model import LLMTurn, ToolResult, UserMessage
from stretto_core.sessions.store import read_session

RESULTS = data_root() / "workbench" / "results"
GPT = "email/gpt-3.5_domains_2024-03-20_13-16-18.csv"
LLAMA = "email/llama2-70b_domains_2024-03-20_17-01-34.csv"
NORMAL, CRASHED, ARRAY, STOPPED = 0, 10, 44, 45

pytestmark = pytest.mark.skipif(not RESULTS.is_dir(), reason="the shared WorkBench results are not here")
csv.field_size_limit(sys.maxsize)


def rows_of(rel: str) -> list[list[str]]:
    with open(RESULTS / rel, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def encode(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def real_slice(tmp_path: Path, rel: str, keep: list[int]) -> Path:
    """A copy of a real results CSV with only some rows, under its own domain folder and name."""
    rows = rows_of(rel)
    out = tmp_path / "results" / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(encode([rows[0]] + [rows[i + 1] for i in keep]), encoding="utf-8")
    return out


def test_each_step_is_one_llm_turn_with_one_call_and_the_output_is_a_last_reply(tmp_path: Path) -> None:
    [session] = convert(real_slice(tmp_path, GPT, [NORMAL]), ManifestSource()).sessions
    assert isinstance(session.events[0], UserMessage)
    assert session.events[0].text == "Delete my last email from nadia"
    turns = session.llm_turns()
    assert [len(t.calls) for t in turns] == [1] * (len(turns) - 1) + [0]
    assert turns[0].calls[0].tool == "email.delete_email"
    assert turns[0].calls[0].arguments == {"email_id": "12345678"}
    first = session.results_by_call()[turns[0].calls[0].call_id]
    assert first.content == "Email not found." and not first.error
    assert turns[-1].text == "Email from Nadia successfully deleted."


def test_the_header_names_the_model_toolset_domain_and_the_querys_row(tmp_path: Path) -> None:
    h = convert(real_slice(tmp_path, GPT, [NORMAL]), ManifestSource()).sessions[0].header
    assert (h.harness, h.agent_model, h.app, h.task_id) == ("workbench", "gpt-3.5", "workbench/email", "email-0")
    assert h.labels["toolset"] == "domains" and "split" not in h.labels and h.reward is None
    assert h.manifest is not None and h.manifest.is_read("email.search_emails")


def test_a_query_workbench_does_not_list_gets_a_hash_of_its_text() -> None:
    assert task_id_of("Delete my last email from nadia", "email") == "email-0"
    assert task_id_of("no such query", "email").startswith("q-") and len(task_id_of("x", "email")) == 14


def test_file_names_give_model_toolset_and_date() -> None:
    assert name_parts(Path("mistral-8x7B_all_2024-03-24_06-47-26.csv")) == ("mistral-8x7B", "all",
                                                                              "2024-03-24_06-47-26")
    assert name_parts(Path("odd.csv")) == ("odd", None, None)


@full_data
def test_a_numpy_array_observation_is_read_without_eval_and_shown_as_numpy_prints_it(tmp_path: Path) -> None:
    [session] = convert(real_slice(tmp_path, GPT, [ARRAY]), ManifestSource()).sessions
    shown = [e for e in session.events if isinstance(e, ToolResult) and isinstance(e.parsed, list)
             and e.content.startswith("['")]
    assert shown and "array(" not in shown[0].content
    assert all(isinstance(v, str) for v in shown[0].parsed)


@full_data
def test_a_run_stopped_by_langchain_has_no_reply_turn(tmp_path: Path) -> None:
    result = convert(real_slice(tmp_path, GPT, [STOPPED]), ManifestSource())
    assert result.sessions[0].llm_turns()[-1].calls
    assert result.sessions[0].header.labels["run_error"].startswith("Agent stopped")


@full_data
def test_a_text_tool_input_becomes_an_input_argument(tmp_path: Path) -> None:
    result = convert(real_slice(tmp_path, LLAMA, [1]), ManifestSource())
    calls = result.sessions[0].agent_calls()
    assert any(set(c.arguments) == {"input"} and isinstance(c.arguments["input"], str) for c in calls)
    assert result.notes["tool_input not a dict, kept as {input: ...}"] >= 1


@full_data
def test_a_row_without_a_trajectory_is_skipped_with_the_run_error(tmp_path: Path) -> None:
    result = convert(real_slice(tmp_path, GPT, [NORMAL, CRASHED]), ManifestSource())
    assert len(result.sessions) == 1
    [skipped] = result.skipped
    assert skipped.kind == "no trajectory" and "Context window exceeded" in skipped.reason


@full_data
def test_a_row_with_a_broken_repr_is_skipped_naming_file_and_line_and_the_rest_converts(tmp_path: Path) -> None:
    rows = rows_of(GPT)
    broken = list(rows[NORMAL + 2])
    broken[2] = broken[2][: len(broken[2]) // 2]
    path = tmp_path / "results" / GPT
    path.parent.mkdir(parents=True)
    path.write_text(encode([rows[0], rows[NORMAL + 1], broken, rows[ARRAY + 1]]), encoding="utf-8")
    report = ingest_files("workbench", [tmp_path / "results"], tmp_path / "out")
    assert report.sessions_written == 2
    [skipped] = report.skipped
    line = 2 + encode([rows[NORMAL + 1]]).count("\n")
    assert skipped.kind == "broken repr" and skipped.line == line
    assert skipped.message.startswith(f"{path}:{line}: row 1: full_response: not a Python repr")


def test_nothing_in_a_repr_is_ever_evaluated(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    call = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    run = parse_agent_run("{'input': 'q', 'output': 'o', 'intermediate_steps': "
                          f"[(AgentAction(tool='t', tool_input={{}}, log=''), {call})]}}")
    assert run.steps[0].observation_text == call and not marker.exists()
    with pytest.raises(ReprError):
        parse_agent_run("{'input': 'q', 'output': 'o', 'intermediate_steps': "
                        f"[(AgentAction(tool={call}, tool_input={{}}, log=''), 'ok')]}}")
    assert not marker.exists()


@full_data
def test_sessions_round_trip_through_the_store(tmp_path: Path) -> None:
    path = real_slice(tmp_path, GPT, [NORMAL, ARRAY, STOPPED])
    report = ingest_files("workbench", [path], tmp_path / "out")
    originals = {s.session_id: s for s in convert(path, ManifestSource()).sessions}
    assert report.sessions_written == 3 == len(originals)
    for file in (tmp_path / "out").glob("*.jsonl"):
        back = read_session(file)
        assert back == originals[back.session_id]
        assert isinstance(back.events[1], LLMTurn)
