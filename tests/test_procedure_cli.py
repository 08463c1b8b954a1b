"""`stretto procedure demonstrate|compile|show|run|cascade`, in process, on a few τ² telecom tasks."""

from __future__ import annotations

import json

import pytest

from shared_data import published_data

from stretto_core.cli import main
from stretto_core.paths import data_root

pytestmark = pytest.mark.env

TEST_TASK = "[mms_issue]bad_network_preference|break_app_both_permissions[PERSONA:Easy]"
SOLO_TEST = "gpt-4.1__results__gpt-4.1_telecom_no-user_gpt-4.1_1trials.json"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("procedure-cli")
    assert main(["procedure", "demonstrate", "--tasks", "generated:4", "--out", str(folder / "demos")]) == 0
    out = folder / "p.procedure.json"
    assert main(["procedure", "compile", "--sessions", str(folder / "demos"), "--out", str(out)]) == 0
    return out


@published_data
def test_compile_writes_a_procedure_that_names_its_demonstrations(compiled):
    data = json.loads(compiled.read_text())
    assert data["stretto_procedure"] == 1 and len(data["provenance"]["sessions"]) == 4
    assert data["provenance"]["sources"][0]["kind"] == "demonstration"


@published_data
def test_show_prints_the_trees(compiled, capsys):
    assert main(["procedure", "show", str(compiled), "--site", "start"]) == 0
    out = capsys.readouterr().out
    assert "### after `start`" in out and "get_customer_by_phone" in out


@published_data
def test_show_says_the_demonstrations_are_not_an_agent_s(compiled, capsys):
    assert main(["procedure", "show", str(compiled)]) == 0
    assert "- demonstration (the hand-written demonstrator's sessions, not an agent's): 4 sessions of 4 tasks" \
        in capsys.readouterr().out


@published_data
def test_run_prints_calls_verdict_and_the_benchmarks_reward(compiled, capsys):
    assert main(["procedure", "run", str(compiled), "--task-id", TEST_TASK]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["verdict"] in ("resolved", "transferred", "hand_back")
    assert result["reward"] in (0.0, 1.0) and result["calls"][0]["tool"] == "get_customer_by_phone"
    assert result["compiled_from"] == "4 sessions of 4 tasks by the hand-written demonstrator"


@published_data
def test_cascade_counts_the_models_turns_only_on_a_hand_back(compiled, capsys):
    assert main(["procedure", "cascade", str(compiled), "--task-id", TEST_TASK]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["llm_turns"] > 0) == (result["procedure_verdict"] == "hand_back")
    assert "not an LLM" in result["model"] and "demonstrator" in result["compiled_from"]
    assert result["reward"] == 1.0


@published_data
def test_compiling_from_test_tasks_is_refused(tmp_path, capsys):
    code = main(["procedure", "compile", "--results", str(data_root() / "tau2/trajectories/telecom" / SOLO_TEST),
                 "--out", str(tmp_path / "p.json")])
    assert code == 2 and "test tasks" in capsys.readouterr().err
    assert not (tmp_path / "p.json").exists()


@published_data
def test_over_mcp_the_real_environment_gives_the_same_calls_and_verdict_as_in_process(compiled):
    import asyncio

    from stretto_core.procedures.ir import load_procedure
    from stretto_core.procedures.mcp import run_on_mcp
    from stretto_core.procedures.runtime import run_procedure
    from stretto_core.procedures.tau2.env import SoloToolSet, telecom_tasks
    from stretto_core.procedures.tau2.mcp_server import build_server

    procedure, task = load_procedure(compiled), telecom_tasks()[TEST_TASK]
    local = run_procedure(procedure, task.ticket, SoloToolSet(task))
    remote = asyncio.run(run_on_mcp(procedure, task.ticket, build_server(task)))
    assert [(c.tool, c.arguments, c.content, c.error) for c in remote.calls] == \
        [(c.tool, c.arguments, c.content, c.error) for c in local.calls]
    assert (remote.verdict, remote.reason) == (local.verdict, local.reason)
    assert len(local.calls) > 3
