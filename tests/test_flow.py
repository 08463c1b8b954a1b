"""The flow IR: learning is counting, so flows merge, serialize deterministically and review."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared_data import FULL_DATA, full_data, published_data
from stretto_core.cli import main
from stretto_core.errors import InputError
from stretto_core.flow.ir import learn, load_flow, merge, save_flow
from stretto_core.flow.review import diff, show
from stretto_core.sessions.ingest import ingest_files
from stretto_core.paths import data_root
from stretto_core.sessions.splits import split_of
from stretto_core.sessions.store import load_sessions

RETAIL = "tau2/trajectories/retail/gpt-4.1-mini-2025-04-14__toolorchestra_nvidia_2025-12-02__toolorchestra_retail_gpt-5_1trial.json"
TRAVEL = "agentdojo/runs/gpt-4o-2024-05-13/travel"


@pytest.fixture(scope="module")
def retail_train(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("retail")
    ingest_files("tau2", [data_root() / RETAIL], out)
    sessions = [s for s in load_sessions([out]) if split_of(s.header) == "train"]
    assert len(sessions) > (40 if FULL_DATA else 2)
    return sessions


@pytest.fixture(scope="module")
def travel(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("travel")
    ingest_files("agentdojo", [data_root() / TRAVEL], out)
    return load_sessions([out])


@published_data
def test_two_learns_of_the_same_sessions_are_byte_identical(retail_train) -> None:
    assert learn(retail_train).to_json() == learn(retail_train).to_json()


@published_data
def test_learning_two_halves_and_merging_equals_learning_at_once(retail_train, travel) -> None:
    for sessions in (retail_train, travel):
        half = len(sessions) // 2
        at_once = learn(sessions)
        merged = merge(learn(sessions[:half]), learn(sessions[half:]))
        assert merged.to_json() == at_once.to_json()


@published_data
def test_flows_of_different_apps_merge_to_the_same_bytes_in_either_order(retail_train, travel) -> None:
    retail, agentdojo = learn(retail_train), learn(travel)
    assert retail.manifest.app != agentdojo.manifest.app
    one, other = merge(retail, agentdojo), merge(agentdojo, retail)
    assert one.to_json() == other.to_json()
    assert one.manifest.app == min(retail.manifest.app, agentdojo.manifest.app)
    assert learn(list(travel) + list(retail_train)).to_json() == one.to_json()


def test_a_tool_whose_sessions_disagree_on_its_contract_merges_the_same_in_any_order() -> None:
    from stretto_core.sessions.manifest import InputContract, ToolKind, ToolManifest, ToolSpec

    bare = ToolManifest(app="b", tools={"t": ToolSpec(kind=ToolKind.read)})
    pinned = ToolManifest(app="a", tools={"t": ToolSpec(kind=ToolKind.read, contract=InputContract(args={"x": "string"}))})
    other = ToolManifest(tools={"t": ToolSpec(kind=ToolKind.write, contract=InputContract(args={"y": "string"}))})
    orders = [(bare, pinned, other), (other, bare, pinned), (pinned, other, bare)]
    unions = {m1.union(m2).union(m3).model_dump_json() for m1, m2, m3 in orders}
    assert len(unions) == 1
    union = bare.union(pinned).union(other)
    assert union.app == "a" and union.tools["t"].kind is ToolKind.write
    assert union.tools["t"].contract == InputContract(args={"x": "string"})


@full_data
def test_a_prior_enters_with_the_weight_asked_for(retail_train) -> None:
    own, others = retail_train[:10], retail_train[10:]
    flow = learn(own, prior=others, prior_weight=5)
    roles = {s.role: s for s in flow.provenance.sources}
    assert roles["data"].sessions == 10 and roles["data"].weight == 1.0
    assert roles["prior"].sessions == len(others)
    assert roles["prior"].weight == pytest.approx(5 / len(others))
    counted = flow.step_counts().sequences()
    assert counted == pytest.approx(10 + 5)


@published_data
def test_the_retail_flow_looks_up_orders_after_the_users_details(retail_train) -> None:
    flow = learn(retail_train)
    text = show(flow)
    assert "get_order_details" in text and "get_user_details $.orders[*]" in text
    after_user = text.split("## after `get_user_details/ok/0`")[1].split("## ")[0]
    first_row = [ln for ln in after_user.splitlines() if ln.startswith("| `")][0]
    assert first_row.startswith("| `get_order_details` ✓")


@published_data
def test_a_flow_round_trips_through_its_file(retail_train, tmp_path: Path) -> None:
    flow = learn(retail_train)
    save_flow(flow, tmp_path / "f.flow.json")
    assert load_flow(tmp_path / "f.flow.json").to_json() == flow.to_json()


def test_a_flow_of_another_version_is_refused_with_its_file_named(tmp_path: Path) -> None:
    bad = tmp_path / "old.flow.json"
    bad.write_text(json.dumps({"stretto_flow": 99}))
    with pytest.raises(InputError, match="old.flow.json.*version"):
        load_flow(bad)
    (tmp_path / "junk.flow.json").write_text("{not json")
    with pytest.raises(InputError, match="junk.flow.json"):
        load_flow(tmp_path / "junk.flow.json")


@full_data
def test_a_diff_flags_a_new_lookup_for_review_and_an_unchanged_flow_for_none(retail_train) -> None:
    few = learn(retail_train[:3])
    many = learn(retail_train)
    assert not diff(many, many).needs_review
    change = diff(few, many)
    assert change.needs_review
    assert any("now looks up" in x or "new binding source" in x for x in change.review)


@full_data
def test_the_cli_learns_shows_merges_and_diffs(retail_train, tmp_path: Path, capsys) -> None:
    sessions_dir = tmp_path / "s"
    from stretto_core.sessions.store import write_session
    for s in retail_train[:20]:
        write_session(s, sessions_dir / "a")
    for s in retail_train[20:40]:
        write_session(s, sessions_dir / "b")
    assert main(["learn", str(sessions_dir / "a"), "--out", str(tmp_path / "a.json")]) == 0
    assert main(["learn", str(sessions_dir / "b"), "--out", str(tmp_path / "b.json")]) == 0
    assert main(["learn", str(sessions_dir), "--out", str(tmp_path / "ab.json")]) == 0
    assert main(["flow", "merge", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--out", str(tmp_path / "m.json")]) == 0
    assert (tmp_path / "m.json").read_text() == (tmp_path / "ab.json").read_text()
    assert main(["flow", "show", str(tmp_path / "m.json")]) == 0
    assert "## after" in capsys.readouterr().out
    assert main(["flow", "diff", str(tmp_path / "m.json"), str(tmp_path / "ab.json")]) == 0
    assert main(["flow", "diff", str(tmp_path / "a.json"), str(tmp_path / "ab.json")]) in (0, 1)
    assert main(["learn", str(tmp_path / "nothing-here"), "--out", str(tmp_path / "x.json")]) == 2


@full_data
def test_a_site_switched_off_makes_no_lookups_there(retail_train, tmp_path: Path) -> None:
    from stretto_core.serve.engine import Engine
    from stretto_core.serve.runtime import FlowRuntime
    from stretto_core.sessions.model import ToolResult

    path = tmp_path / "f.flow.json"
    save_flow(learn(retail_train), path)
    assert main(["flow", "threshold", str(path), "--site", "get_user_details", "--theta", "2"]) == 0
    flow = load_flow(path)
    assert flow.thresholds == {"get_user_details": 2.0}
    assert "(θ = 2)" in show(flow)
    engine = Engine(FlowRuntime(flow))
    made_after: dict[str, int] = {}
    for session in retail_train[:15]:
        es = engine.session(live_manifest=session.header.manifest)
        for event in session.events:
            es.observe(event)
            if isinstance(event, ToolResult) and event.tool in ("get_user_details", "find_user_id_by_email"):
                made = es.run_lookups(event.call_id, lambda tool, args: ("{}", False))
                made_after[event.tool] = made_after.get(event.tool, 0) + len(made)
    assert made_after.get("get_user_details", 0) == 0
    assert made_after.get("find_user_id_by_email", 0) > 0


def test_a_review_reads_the_flows_lookup_tools_once_not_once_per_site(monkeypatch) -> None:
    # `flow stage` prints this review at every stage; each read of the tools rebuilds the counts
    from shop_sessions import MANIFEST, shop_sessions
    from stretto_core.flow.ir import Flow
    from stretto_core.flow.review import site_lookups

    flow = learn(shop_sessions(12), MANIFEST)
    calls = []
    lookup_tools = Flow.lookup_tools
    monkeypatch.setattr(Flow, "lookup_tools", lambda self: calls.append(1) or lookup_tools(self))
    rows = site_lookups(flow)
    assert len({row.site for row in rows}) > 1 and calls == [1]
