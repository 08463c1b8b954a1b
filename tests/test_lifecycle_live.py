"""A live app from its first day: record-only while no flow exists, shadow sessions that hold what
stretto would do, a random holdout, the environment's switches, and a flow file replaced under a
running app picked up by its next session."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from shop_sessions import MANIFEST, serve_recorded, shop_flow, shop_sessions, shop_tools
from stretto_core import Stretto
from stretto_core.flow.ir import save_flow
from stretto_core.sessions.model import Lookup, ShadowLookup, ToolResult
from stretto_core.sessions.store import read_session


def run(stretto: Stretto, name: str, episode_index: int = 20):
    live = stretto.session(name, tools=MANIFEST)
    serve_recorded(live, shop_sessions(30)[episode_index], shop_tools())
    live.close()
    return live, read_session(live.recorder.path)


def test_a_flow_path_that_does_not_exist_yet_records_and_says_once_where_and_what_next(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    flow_path, store = tmp_path / "app" / "flow.json", tmp_path / "app" / "sessions"
    with caplog.at_level(logging.INFO, logger="stretto"):
        stretto = Stretto(flow_path, store=store, reads=MANIFEST.reads())
        live, session = run(stretto, "day-one")
        run(stretto, "day-one-again")
    notes = [r.getMessage() for r in caplog.records if "no flow at" in r.getMessage()]
    assert len(notes) == 1 and str(store) in notes[0] and f"stretto learn {store} --out {flow_path}" in notes[0]
    assert session.header.mode == "record" and session.header.flow_sha256 is None and not live.lookups


def test_a_flow_written_under_a_running_app_serves_from_its_next_session(tmp_path: Path) -> None:
    flow_path = tmp_path / "flow.json"
    stretto = Stretto(flow_path, store=tmp_path / "s", reads=MANIFEST.reads(), theta=0.0)
    running = stretto.session("running", tools=MANIFEST)
    save_flow(shop_flow(), flow_path)
    _, served = run(stretto, "next")
    serve_recorded(running, shop_sessions(30)[20], shop_tools())
    assert served.header.mode == "serve" and len(served.header.flow_sha256 or "") == 64
    assert any(isinstance(e, Lookup) for e in served.events)
    assert running.mode == "record" and not running.lookups, "a running session keeps what it started with"


def test_a_replaced_flow_serves_new_sessions_and_a_broken_one_is_logged_and_the_old_kept(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    flow_path = tmp_path / "flow.json"
    save_flow(shop_flow(10), flow_path)
    stretto = Stretto(flow_path, store=tmp_path / "s", reads=MANIFEST.reads())
    _, first = run(stretto, "first")
    save_flow(shop_flow(20), flow_path)
    _, second = run(stretto, "second")
    assert first.header.flow_sha256 != second.header.flow_sha256
    flow_path.write_text('{"stretto_flow": 1, "counts": "torn')
    with caplog.at_level(logging.WARNING, logger="stretto"):
        _, third = run(stretto, "third")
        run(stretto, "fourth")
    broken = [r for r in caplog.records if "does not load" in r.getMessage()]
    assert len(broken) == 1 and str(flow_path) in broken[0].getMessage()
    assert third.header.flow_sha256 == second.header.flow_sha256 and third.header.mode == "serve"


def test_a_shadow_session_records_what_serving_would_look_up_and_appends_and_calls_nothing(tmp_path: Path) -> None:
    flow = shop_flow()
    calls: list[str] = []
    tools = shop_tools()

    def counting(tool, arguments):
        calls.append(tool)
        return tools(tool, arguments)

    shadow = Stretto(flow, store=tmp_path / "shadow", reads=MANIFEST.reads(), theta=0.2, shadow=True)
    live = shadow.session("shadowed", tools=MANIFEST)
    serve_recorded(live, shop_sessions(30)[20], counting)
    live.close()
    session = read_session(live.recorder.path)
    would = [e for e in session.events if isinstance(e, ShadowLookup)]
    assert session.header.mode == "shadow" and session.header.flow_sha256
    assert would and not calls and not live.lookups
    assert all(e.appended is None for e in session.events if isinstance(e, ToolResult))
    assert all(w.after_call_id and w.site and w.score is not None and w.score >= 0.2 and w.reach is not None
               and w.binding is not None for w in would)
    served = Stretto(flow, store=tmp_path / "served", reads=MANIFEST.reads(), theta=0.2)
    _, served_session = run(served, "served")
    made = [e for e in served_session.events if isinstance(e, Lookup)]
    first_call = made[0].after_call_id
    assert [(w.tool, w.arguments) for w in would if w.after_call_id == first_call][:1] == \
        [(m.tool, m.arguments) for m in made if m.after_call_id == first_call][:1]


def test_a_shadow_chain_is_conditioned_on_the_lookups_before_it_and_leaves_the_agents_state_alone() -> None:
    flow = shop_flow()
    stretto = Stretto(flow, store=False, reads=MANIFEST.reads(), theta=0.0, shadow=True, per_call=3)
    live = stretto.session("chain", tools=MANIFEST)
    episode = shop_sessions(30)[20]
    rounds: list[list[ShadowLookup]] = []
    original = live.engine_session.shadow_round

    def spy(call_id):
        history = list(live.engine_session.history)
        got = original(call_id)
        assert live.engine_session.history == history and not any(
            k.startswith("stretto-shadow") for k in live.engine_session.state.in_flight)
        rounds.append(got)
        return got

    live.engine_session.shadow_round = spy
    serve_recorded(live, episode, shop_tools())
    chains = [r for r in rounds if len(r) > 1]
    assert chains, "θ = 0 makes chains"
    for chain in chains:
        assert len({(w.tool, json.dumps(w.arguments, sort_keys=True)) for w in chain}) == len(chain)
        assert [w.site for w in chain[1:]] == [w.tool for w in chain[:-1]], "each decided after the one before"


def test_the_environment_switches_act_per_session_without_a_restart(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    stretto = Stretto(shop_flow(), store=tmp_path, reads=MANIFEST.reads(), theta=0.0)
    monkeypatch.setenv("STRETTO_SHADOW", "1")
    shadowed, shadow_session = run(stretto, "shadow-by-env")
    monkeypatch.setenv("STRETTO_DISABLED", "1")
    disabled, disabled_session = run(stretto, "disabled-by-env")
    monkeypatch.delenv("STRETTO_DISABLED")
    monkeypatch.delenv("STRETTO_SHADOW")
    served, served_session = run(stretto, "served-again")
    assert shadow_session.header.mode == "shadow" and not shadowed.lookups
    assert any(isinstance(e, ShadowLookup) for e in shadow_session.events)
    assert disabled_session.header.mode == "record" and not disabled.lookups
    assert not any(isinstance(e, (ShadowLookup, Lookup)) for e in disabled_session.events)
    assert served_session.header.mode == "serve" and served.lookups


def test_a_holdout_fraction_serves_that_share_of_sessions_nothing_and_says_so(tmp_path: Path) -> None:
    stretto = Stretto(shop_flow(), store=tmp_path, reads=MANIFEST.reads(), theta=0.0, holdout=0.5)
    modes = [stretto.session(f"s{i}", tools=MANIFEST).mode for i in range(200)]
    assert set(modes) == {"holdout", "serve"} and 60 < modes.count("holdout") < 140
    everyone = Stretto(shop_flow(), store=tmp_path, reads=MANIFEST.reads(), theta=0.0, holdout=1.0)
    held, session = run(everyone, "held")
    assert session.header.mode == "holdout" and session.header.flow_sha256 is None and not held.lookups


def test_a_session_of_format_two_still_reads(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"stretto_session": 2, "session_id": "s", "harness": "t"}) + "\n"
                   + json.dumps({"kind": "user", "text": "hi"}) + "\n")
    session = read_session(old)
    assert session.header.stretto_session == 2 and session.header.mode is None
