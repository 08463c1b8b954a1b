"""τ²-bench results files become sessions that keep every call, result, user action and label."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest

from shared_data import full_data
from stretto_core.errors import InputError
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.ingest.common import ManifestSource
from stretto_core.sessions.ingest.tau2 import convert, harness_of
from stretto_core.paths import data_root
from stretto_core.sessions.model import ToolResult, UserMessage
from stretto_core.sessions.store import read_session

TRAJ = data_root() / "tau2" / "trajectories"
TELECOM = "telecom/gpt-4.1__results__gpt-4.1_telecom_default_gpt-4.1_1trials.json"
SOLO = "telecom/gpt-4.1__results__gpt-4.1_telecom_no-user_gpt-4.1_1trials.json"
ORCHESTRA = "retail/gpt-4.1-mini-2025-04-14__toolorchestra_nvidia_2025-12-02__toolorchestra_retail_gpt-5_1trial.json"
WHISSLE = "airline/whissle__whissle__airline_run1.json"
BARE_LIST = "airline/unknown__adaptive-agent_ironshell-ui_2026-03-22__adaptive-agent_airline_claude-opus-4-6_1trial.json"

pytestmark = pytest.mark.skipif(not TRAJ.is_dir(), reason="the shared τ²-bench trajectories are not here")


@lru_cache(maxsize=None)
def _load(rel: str) -> str:
    return (TRAJ / rel).read_text(encoding="utf-8")


def real_slice(tmp_path: Path, rel: str, indices: list[int]) -> Path:
    """A copy of a real results file keeping only some simulations, under its own name and domain."""
    data = json.loads(_load(rel))
    if isinstance(data, list):
        data = [data[i] for i in indices]
    else:
        data["simulations"] = [data["simulations"][i] for i in indices]
    out = tmp_path / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def test_a_telecom_user_phone_call_is_recorded_as_the_users_call(tmp_path: Path) -> None:
    session = convert(real_slice(tmp_path, TELECOM, [0]), ManifestSource()).sessions[0]
    user_calls = [c for e in session.events if isinstance(e, UserMessage) for c in e.calls]
    assert user_calls[0].tool == "check_status_bar"
    assert user_calls[0].call_id not in {c.call_id for c in session.agent_calls()}
    result = session.results_by_call()[user_calls[0].call_id]
    assert result.tool == "check_status_bar" and result.content.startswith("Status Bar:")


def test_each_assistant_message_but_the_canned_greeting_is_one_llm_turn_with_its_usage(tmp_path: Path) -> None:
    path = real_slice(tmp_path, TELECOM, [0])
    sim = json.loads(path.read_text())["simulations"][0]
    session = convert(path, ManifestSource()).sessions[0]
    assistant = [m for m in sim["messages"] if m["role"] == "assistant"]
    assert assistant[0]["content"] == "Hi! How can I help you today?"
    assistant = assistant[1:]  # the orchestrator's greeting, no model turn
    turns = session.llm_turns()
    assert len(turns) == len(assistant)
    priced = next(i for i, m in enumerate(assistant) if m.get("usage"))
    assert turns[priced].usage.input_tokens == assistant[priced]["usage"]["prompt_tokens"]
    assert turns[priced].usage.output_tokens == assistant[priced]["usage"]["completion_tokens"]
    assert turns[priced].usage.cost == assistant[priced]["cost"]


def test_the_header_names_harness_agent_app_task_trial_reward_and_split(tmp_path: Path) -> None:
    session = convert(real_slice(tmp_path, TELECOM, [0]), ManifestSource()).sessions[0]
    h = session.header
    assert (h.harness, h.agent_model, h.app) == ("tau2", "gpt-4.1", "tau2/telecom")
    assert h.task_id.startswith("[mobile_data_issue]") and h.trial == 0 and h.reward == 1.0
    assert h.labels["split"] in ("train", "test", "none") and h.solo is False
    assert h.started_at is not None and h.source.endswith("#0")
    assert h.manifest is not None and h.manifest.is_read("get_customer_by_phone")
    assert h.manifest.tools["get_customer_by_phone"].contract.required == ["phone_number"]
    assert h.manifest_hash


def test_a_no_user_file_is_solo_and_no_user_speaks_in_it(tmp_path: Path) -> None:
    sessions = convert(real_slice(tmp_path, SOLO, [0, 1]), ManifestSource()).sessions
    assert all(s.header.solo for s in sessions)
    assert not any(isinstance(e, UserMessage) for s in sessions for e in s.events)


@full_data
def test_toolorchestra_error_texts_are_errors_and_the_recorded_task_label_is_kept(tmp_path: Path) -> None:
    sessions = convert(real_slice(tmp_path, ORCHESTRA, [4, 14]), ManifestSource()).sessions
    errors = [e for e in sessions[0].events if isinstance(e, ToolResult) and e.content.startswith("Error:")]
    assert errors and all(e.error for e in errors)
    assert sessions[0].header.harness == "toolorchestra"
    assert sessions[0].header.task_id == "35" and sessions[0].header.labels["task_id_as_recorded"] == "4"
    assert sessions[1].header.task_id == "unverified-14" and sessions[1].header.labels["split"] == "none"


def test_reused_call_ids_are_made_unique_and_each_result_answers_its_own_call(tmp_path: Path) -> None:
    session = convert(real_slice(tmp_path, WHISSLE, [0]), ManifestSource()).sessions[0]
    ids = [c.call_id for c in session.agent_calls()]
    assert len(ids) == len(set(ids)) and any("~" in i for i in ids)
    results = [e for e in session.events if isinstance(e, ToolResult)]
    assert [r.call_id for r in results] == ids
    assert session.header.harness == "whissle"


def test_a_bare_list_of_simulations_converts_and_names_the_agent_from_the_file(tmp_path: Path) -> None:
    session = convert(real_slice(tmp_path, BARE_LIST, [0]), ManifestSource()).sessions[0]
    assert session.header.harness == "adaptive-agent"
    assert session.header.agent_model == "claude-opus-4-6"
    assert session.header.app == "tau2/airline"


@pytest.mark.parametrize("raw, short", [
    ("results", "tau2"), ("simulations", "tau2"), ("test_run_1", "tau2"), ("ollama_chat", "tau2"),
    ("toolorchestra_nvidia_2025-12-02", "toolorchestra"), ("ironshell-ironforge_ironshell-ui_2026-03-09", "ironshell"),
    ("adaptive-agent_community_2026-03-23", "adaptive-agent"), ("whissle", "whissle"), (None, "tau2"),
])
def test_harness_parts_of_file_names_map_to_short_harness_names(raw: str | None, short: str) -> None:
    assert harness_of(raw) == short


def test_sessions_round_trip_through_the_store(tmp_path: Path) -> None:
    path = real_slice(tmp_path, TELECOM, [0, 1])
    report = ingest_files("tau2", [path], tmp_path / "out")
    assert report.sessions_written == 2
    originals = {s.session_id: s for s in convert(path, ManifestSource()).sessions}
    for file in (tmp_path / "out").glob("*.jsonl"):
        back = read_session(file)
        assert back == originals[back.session_id]


def test_a_truncated_results_file_is_an_input_error_naming_file_and_line(tmp_path: Path) -> None:
    path = real_slice(tmp_path, TELECOM, [0])
    text = json.dumps(json.loads(path.read_text()), indent=1)
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(InputError) as caught:
        convert(path, ManifestSource())
    assert caught.value.path == str(path) and caught.value.line is not None and caught.value.line > 1
    report = ingest_files("tau2", [path], tmp_path / "out")
    assert report.files[0].unreadable and f"{path}:{caught.value.line}" in report.skipped[0].message


def test_a_bad_simulation_is_skipped_and_named_and_the_rest_converts(tmp_path: Path) -> None:
    path = real_slice(tmp_path, TELECOM, [0, 1])
    data = json.loads(path.read_text())
    data["simulations"][0]["messages"][3] = "not a message"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = convert(path, ManifestSource())
    assert len(result.sessions) == 1 and result.sessions[0].header.source.endswith("#1")
    assert "simulation 0: message 3" in result.skipped[0].message


def test_two_files_of_one_agent_never_share_a_session_id_and_ids_repeat_across_runs(tmp_path: Path) -> None:
    one = convert(real_slice(tmp_path, TELECOM, [0]), ManifestSource()).sessions
    two = convert(real_slice(tmp_path, SOLO, [0]), ManifestSource()).sessions
    again = convert(real_slice(tmp_path, TELECOM, [0]), ManifestSource()).sessions
    assert one[0].session_id != two[0].session_id
    assert one[0].session_id == again[0].session_id
    assert isinstance(one[0].events[0], UserMessage)  # the canned greeting is left out
