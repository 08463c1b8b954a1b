"""Writes gated by what their demonstrations changed, and the fallback within a procedure.

The toy lamp world shows the mechanism; the recorded τ²-bench telecom sessions show what it is
for: compiled from three recorded tasks, the procedure passes the fourth, whose two faults were
each repaired in another task and never together (leave one task out on the train split).
"""

from __future__ import annotations

import copy

import pytest

from test_procedure_world import customer, training_episodes

from shared_data import published_data
from stretto_core.procedures.compile import CompileOptions, compile_procedure
from stretto_core.procedures.ir import Leaf, Option
from stretto_core.procedures.runtime import run_procedure


@pytest.fixture(scope="module")
def procedure():
    return compile_procedure(training_episodes(), "toy/lamp")


def toggle_key(procedure) -> str:
    return next(k for k, a in procedure.actions.items() if a.tool == "toggle_lamp")


def test_a_toggle_requires_what_every_demonstration_of_it_changed_and_no_identifier(procedure):
    requires = procedure.actions[toggle_key(procedure)].requires
    assert "now:says Lamp: OFF" in requires
    assert not any("C10" in f or "555-" in f for f in requires)
    assert all(not a.requires for a in procedure.actions.values() if a.tool in procedure.reads)


def test_a_leaf_that_would_toggle_a_lit_lamp_off_is_held_back_by_the_precondition(procedure):
    forced = procedure.model_copy(deep=True)
    forced.trees["check_lamp"].root = Leaf(options=[Option(action=toggle_key(forced), count=1)])
    forced.fallback = False
    lit = customer(90, lamp_on=True)
    result = run_procedure(forced, lit.ticket(), lit)
    assert lit.lamp_on and ("toggle_lamp", {}) not in lit.log
    assert result.verdict == "hand_back" and "does not hold: now:says Lamp: OFF" in result.reason
    unguarded = forced.model_copy(deep=True)
    unguarded.actions[toggle_key(unguarded)].requires = []
    lit_again = customer(91, lamp_on=True)
    run_procedure(unguarded, lit_again.ticket(), lit_again)
    assert not lit_again.lamp_on, "without the precondition the same leaf turns the lamp off"


def test_where_a_leaf_has_nothing_it_may_make_the_fallback_makes_a_write_whose_state_holds(procedure):
    stuck = procedure.model_copy(deep=True)
    stuck.trees["check_lamp"].root = Leaf(options=[])
    dark = customer(92)
    result = run_procedure(stuck, dark.ticket(), dark)
    assert dark.lamp_on and result.verdict == "resolved", result.reason
    assert any(c.site == "check_lamp (fallback)" and c.tool == "toggle_lamp" for c in result.calls)
    stuck.fallback = False
    dark_again = customer(93)
    assert run_procedure(stuck, dark_again.ticket(), dark_again).verdict == "hand_back"


@pytest.mark.env
@published_data
@pytest.mark.parametrize("held", [
    "[mobile_data_issue]airplane_mode_on|user_abroad_roaming_enabled_off[PERSONA:None]",
    "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]",
])
def test_compiled_from_three_recorded_tasks_it_passes_the_fourth_and_the_compiler_before_did_not(held):
    from stretto_core.paths import data_root
    from stretto_core.procedures.sources import read_sessions, training_episodes as recorded_episodes
    from stretto_core.procedures.tau2.env import telecom_tasks
    from stretto_core.procedures.tau2.harness import run_task

    tasks = telecom_tasks()
    path = (data_root() / "tau2/trajectories/telecom" /
            "gpt-4.1-2025-04-14__test_run_1__2025-04-14_telecom_no-user_gpt-4.1-2025-04-14_4trials_5tasks.json")
    episodes = recorded_episodes(read_sessions(results_paths=[path]), "tau2/telecom", lambda t: tasks[t].ticket)
    others = [e for e in episodes if e.task_id != held]
    assert held in {e.task_id for e in episodes} and len({e.task_id for e in others}) == 3
    now = run_task(compile_procedure(copy.deepcopy(others), "tau2/telecom"), tasks[held])
    before = run_task(compile_procedure(copy.deepcopy(others), "tau2/telecom",
                                        CompileOptions(preconditions=False, fallback=False)), tasks[held])
    assert now.verdict == "resolved" and now.reward.reward == 1.0, now.reason
    assert before.reward.reward == 0.0 and before.verdict == "hand_back"


def test_a_run_that_held_back_a_write_hands_back_instead_of_escalating(procedure):
    welded = customer(94, fuse="welded")
    followed = run_procedure(procedure, welded.ticket(), welded)
    assert followed.verdict == "transferred"
    held = procedure.model_copy(deep=True)
    held.trees["check_lamp"].root = Leaf(options=[Option(action=toggle_key(held), count=1),
                                                  Option(action=next(k for k, a in held.actions.items()
                                                                     if a.tool == "transfer_to_human"), count=1)])
    welded_again = customer(95, fuse="welded")
    result = run_procedure(held, welded_again.ticket(), welded_again)
    assert result.verdict == "hand_back" and "left its demonstrations" in result.reason
    assert not any(tool == "transfer_to_human" for tool, _ in welded_again.log)
