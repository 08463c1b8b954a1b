"""Compiling a procedure from solo episodes, and running it with no model, on the toy lamp world."""

from __future__ import annotations

import json

import pytest

from test_procedure_world import customer, training_episodes

from stretto_core.errors import InputError
from stretto_core.procedures.bindings import bind, candidates
from stretto_core.procedures.compile import compile_procedure
from stretto_core.procedures.ir import Binding, dump_procedure, load_procedure, save_procedure
from stretto_core.procedures.runtime import run_procedure
from stretto_core.procedures.show import show
from stretto_core.procedures.state import RunState, Step
from stretto_core.procedures.tree import Example, choose_depth, grow, predict


@pytest.fixture(scope="module")
def procedure():
    return compile_procedure(training_episodes(), "toy/lamp")


def test_a_customer_no_trace_saw_is_fixed_with_ids_bound_from_results_and_the_ticket(procedure):
    world = customer(77, fuse="blown", suspended=True)
    result = run_procedure(procedure, world.ticket(), world)
    assert result.verdict == "resolved", result.reason
    assert world.lamp_on and not world.suspended
    assert ("resume_line", {"customer_id": "C1077", "line_id": "L10772"}) in world.log
    assert world.log[0] == ("get_customer_by_phone", {"phone": world.phone})


def test_a_welded_fuse_is_transferred_as_the_demonstrations_did(procedure):
    world = customer(78, fuse="welded")
    result = run_procedure(procedure, world.ticket(), world)
    assert result.verdict == "transferred"
    assert result.calls[-1].tool == "transfer_to_human" and not world.lamp_on


def test_a_lamp_that_stays_off_fails_the_outcome_check_and_is_handed_back(procedure):
    world = customer(79, stuck=True)
    result = run_procedure(procedure, world.ticket(), world)
    assert result.verdict == "hand_back"
    assert "check" in result.reason and "Lamp: ON" in result.reason


def test_the_check_is_learned_from_what_resolved_runs_read_after_their_last_write(procedure):
    [check] = procedure.checks
    assert check.probe == "check_lamp{}"
    assert "says Lamp: ON" in check.contains and "says Lamp: OFF" in check.lacks


def test_the_line_is_picked_by_the_phone_number_the_ticket_gives(procedure):
    resume = next(a for k, a in procedure.actions.items() if a.tool == "resume_line")
    line = resume.arguments["line_id"]
    assert line.kind == "result" and line.tool == "get_line" and line.path == "$.line_id"
    assert line.where["phone_number"].kind == "ticket"
    assert resume.arguments["customer_id"].tool == "get_customer_by_phone"


def test_free_text_that_varied_becomes_one_text_binding(procedure):
    transfer = next(a for a in procedure.actions.values() if a.tool == "transfer_to_human")
    assert transfer.arguments["summary"].kind == "text"


def test_the_procedure_says_what_it_was_compiled_from(procedure):
    assert procedure.provenance.sessions == sorted(f"toy-{n}" for n in range(1, 13))
    assert procedure.provenance.sources[0].kind == "recorded" and procedure.provenance.sources[0].sessions == 12
    assert procedure.handoff == "transfer_to_human"


def test_two_compiles_of_the_same_episodes_write_the_same_bytes(procedure):
    assert dump_procedure(compile_procedure(training_episodes(), "toy/lamp")) == dump_procedure(procedure)


def test_a_saved_procedure_loads_back_equal_and_another_version_is_refused(procedure, tmp_path):
    path = save_procedure(procedure, tmp_path / "lamp.procedure.json")
    assert load_procedure(path) == procedure
    data = json.loads(path.read_text())
    data["stretto_procedure"] = 2
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="stretto_procedure"):
        load_procedure(path)


def test_show_names_sites_checks_and_bindings(procedure):
    text = show(procedure)
    assert "### after `start`" in text and "## Checks (1)" in text
    assert "@get_customer_by_phone$.customer_id" in text


def test_a_value_in_a_list_of_records_is_bound_by_the_field_that_sets_its_record_apart():
    bills = [{"bill_id": "B1", "status": "Paid"}, {"bill_id": "B2", "status": "Overdue"}]
    state = RunState("pay the overdue bill", [Step.of("get_bills", {}, json.dumps(bills), False, "read")])
    found = candidates("B2", state)
    picked = [b for b in found if b.where]
    assert picked and picked[0].where["status"].value == "Overdue"
    other = RunState("t", [Step.of("get_bills", {}, json.dumps(list(reversed(
        [{"bill_id": "B7", "status": "Overdue"}, {"bill_id": "B8", "status": "Paid"}]))), False, "read")])
    assert bind(picked[0], other) == ["B7"]


def test_a_ticket_binding_takes_the_value_of_the_same_shape_in_a_new_ticket():
    state = RunState("call me at 555-123-2002 please")
    ticket = next(b for b in candidates("555-123-2002", state) if b.kind == "ticket")
    assert bind(ticket, RunState("my number is 212-555-0199.")) == ["212-555-0199"]
    assert bind(Binding(kind="ticket", pattern=ticket.pattern), RunState("no number here")) == []


def test_the_guard_forbids_a_read_again_before_a_write_and_a_write_again_before_another():
    state = RunState("t", [Step.of("check_lamp", {}, "Lamp: OFF", False, "read")])
    assert state.forbidden("check_lamp", {}, "read")
    state.add(Step.of("toggle_lamp", {}, "ok", False, "write"))
    assert not state.forbidden("check_lamp", {}, "read")
    assert state.forbidden("toggle_lamp", {}, "write")
    state.add(Step.of("replace_fuse", {}, "ok", False, "write"))
    assert not state.forbidden("toggle_lamp", {}, "write")


def test_id3_splits_on_the_feature_that_tells_the_actions_apart_and_cv_keeps_it_shallow():
    examples = [Example(frozenset({"x", f"noise{i}"} if i % 2 else {f"noise{i}"}), "a" if i % 2 else "b", f"t{i}")
                for i in range(20)]
    depth, accuracy = choose_depth(examples)
    tree = grow(examples, depth)
    assert depth == 1 and accuracy == 1.0
    assert predict(tree, {"x"})[0].action == "a" and predict(tree, set())[0].action == "b"


def test_without_provenance_a_new_customer_gets_the_demonstrated_ids_and_fails(procedure):
    from stretto_core.procedures.compile import CompileOptions

    constants = compile_procedure(training_episodes(), "toy/lamp", CompileOptions(constants_only=True))
    assert all(b.kind in ("const", "text") for a in constants.actions.values() for b in a.arguments.values())
    world = customer(80, fuse="blown")
    result = run_procedure(constants, world.ticket(), world)
    assert result.calls[0].error and not world.lamp_on
    assert run_procedure(procedure, customer(80, fuse="blown").ticket(), customer(80, fuse="blown")).verdict == "resolved"
