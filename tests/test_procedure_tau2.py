"""τ²-bench telecom solo, a small slice: the reward, demonstrations, a compiled procedure on test tasks.

The full measurement (all 40 test tasks, renamed customers, the learning curve, the cascade) is
`benchmarks/procedures_solo.py`; this runs a few tasks in the real environment.
"""

from __future__ import annotations

import json

import pytest

from shared_data import full_data, published_data
from stretto_core.errors import StrettoError
from stretto_core.paths import data_root
from stretto_core.procedures.compile import compile_procedure
from stretto_core.procedures.sources import read_sessions, refuse_test_sessions, training_episodes
from stretto_core.procedures.tau2.env import env_constructor, telecom_tasks
from stretto_core.procedures.tau2.harness import demonstrations, generated_task_ids, run_task, training_task_ids
from stretto_core.procedures.tau2.measure import measure, summarize
from stretto_core.procedures.tau2.reward import task_reward
from stretto_core.sessions.splits import official_split

pytestmark = pytest.mark.env

APP = "tau2/telecom"
SOLO_TRAIN = "gpt-4.1-2025-04-14__test_run_1__2025-04-14_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json"
SOLO_TEST = "gpt-4.1__results__gpt-4.1_telecom_no-user_gpt-4.1_1trials.json"
TEST_SLICE = [
    "[mms_issue]bad_network_preference|break_app_both_permissions[PERSONA:Easy]",
    "[mobile_data_issue]airplane_mode_on|bad_network_preference|user_abroad_roaming_enabled_off[PERSONA:Easy]",
    "[service_issue]contract_end_suspension|lock_sim_card_pin[PERSONA:Hard]",
]


def recorded_calls(sim: dict) -> list[tuple[str, dict, str, bool]]:
    results = {m["id"]: m for m in sim["messages"] if m["role"] == "tool"}
    return [(c["name"], c["arguments"], results[c["id"]]["content"], bool(results[c["id"]].get("error")))
            for m in sim["messages"] if m["role"] == "assistant" for c in (m.get("tool_calls") or [])]


def ticket(task_id: str) -> str:
    return telecom_tasks()[task_id].ticket


@pytest.fixture(scope="module")
def slice_procedure():
    train = sorted(training_task_ids())
    by_kind: dict[str, list[str]] = {}
    for task_id in train:
        by_kind.setdefault(task_id.split("]")[0], []).append(task_id)
    chosen = [t for ids in by_kind.values() for t in ids[:14]]
    sessions, rewards = demonstrations(chosen)
    episodes = training_episodes(sessions, APP, ticket)
    return compile_procedure(episodes, APP), rewards


@full_data
def test_our_reward_is_the_reward_the_recorded_solo_runs_carry():
    data = json.loads((data_root() / "tau2/trajectories/telecom" / SOLO_TEST).read_text())
    sims = data["simulations"][6:10]
    rewards = [task_reward(telecom_tasks()[s["task_id"]], recorded_calls(s), env_constructor()).reward for s in sims]
    assert rewards == [s["reward_info"]["reward"] for s in sims]
    assert 0.0 in rewards and 1.0 in rewards


@published_data
def test_the_demonstrator_passes_the_training_tasks_it_demonstrates(slice_procedure):
    _, rewards = slice_procedure
    assert len(rewards) == 42 and sum(r >= 1 for r in rewards) == len(rewards)


@published_data
def test_a_procedure_compiled_from_training_demonstrations_passes_held_out_test_tasks(slice_procedure):
    procedure, _ = slice_procedure
    assert not set(procedure.provenance.tasks) & set(official_split("tau2", "telecom").test)
    alone, cascaded = measure(procedure, TEST_SLICE)
    summary = summarize(alone, cascaded)
    verdicts = {r.task_id: r.verdict for r in alone}
    assert summary.passed == 3, [(r.task_id, r.verdict, r.reason) for r in alone]
    assert verdicts[TEST_SLICE[2]] == "transferred"
    assert summary.llm_turns == 0


@published_data
def test_renamed_customers_pass_as_the_originals_do(slice_procedure):
    procedure, _ = slice_procedure
    alone, _ = measure(procedure, TEST_SLICE[:2], renamed=True, cascade=False)
    assert [r.reward.reward for r in alone] == [1.0, 1.0]
    first = alone[0].calls[0]
    assert first[0] == "get_customer_by_phone" and first[1]["phone_number"] != "555-123-2002"


@published_data
def test_a_procedure_from_the_recorded_sessions_alone_hands_back_what_it_cannot_do():
    recorded = training_episodes(read_sessions(results_paths=[data_root() / "tau2/trajectories/telecom" / SOLO_TRAIN]),
                                 APP, ticket)
    procedure = compile_procedure(recorded, APP)
    assert {s.kind for s in procedure.provenance.sources} == {"recorded"}
    run = run_task(procedure, telecom_tasks()[TEST_SLICE[0]])
    assert run.verdict == "hand_back" and run.reward.reward == 0.0


@published_data
def test_sessions_of_test_tasks_are_refused_not_compiled():
    sessions = read_sessions(results_paths=[data_root() / "tau2/trajectories/telecom" / SOLO_TEST])
    with pytest.raises(StrettoError, match="test tasks"):
        refuse_test_sessions(sessions[:1], APP)


@published_data
def test_generated_tasks_are_never_test_tasks_nor_their_persona_variants():
    test = official_split("tau2", "telecom").test
    signatures = {t.rsplit("[PERSONA:", 1)[0] for t in test}
    generated = generated_task_ids()
    assert len(generated) > 2000
    assert not {t.rsplit("[PERSONA:", 1)[0] for t in generated} & signatures


def test_the_workflow_model_takes_reads_after_the_last_write_from_its_context_and_makes_the_rest():
    from stretto_core.procedures.cascade import context_of
    from stretto_core.procedures.runtime import Call, RunResult
    from stretto_core.procedures.tau2.demonstrator import WorkflowModel

    ticket = ("The user has been unable to send MMS messages. Customer name: A B, phone number: 555-000-1111. "
              "They will consider the issue resolved when an MMS message can be successfully sent.")
    customer = json.dumps({"customer_id": "C9", "line_ids": ["L9"]})
    line = json.dumps({"line_id": "L9", "phone_number": "555-000-1111", "status": "Active"})
    calls = [Call("get_customer_by_phone", {"phone_number": "555-000-1111"}, customer),
             Call("get_details_by_id", {"id": "L9"}, line)]
    model = WorkflowModel(ticket, reads={"get_customer_by_phone", "get_details_by_id", "can_send_mms"})
    assert model.turn(context_of(ticket, RunResult("hand_back", "test", calls))).calls == [("can_send_mms", {})]
    after_write = calls + [Call("toggle_data", {}, "Mobile Data is now ON.")]
    fresh = WorkflowModel(ticket, reads={"get_customer_by_phone", "get_details_by_id", "can_send_mms"})
    first = fresh.turn(context_of(ticket, RunResult("hand_back", "test", after_write))).calls
    assert first == [("get_customer_by_phone", {"phone_number": "555-000-1111"})]
