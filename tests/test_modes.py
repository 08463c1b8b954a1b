"""Sessions per mode: a flow says how many solo sessions it learned from; a mode it learned too few
of (while it learned the other) is served with its reach as learned by default, and shrunk towards
the habit only when asked (`flow/modes.py`: the train split did not support the shrinkage)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from shop_sessions import MANIFEST, shop_sessions
from stretto_core.cli import app
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow.ir import learn, load_flow, merge, save_flow
from stretto_core.flow.modes import (MIN_MODE_SESSIONS, SOLO, USER_PRESENT, mode_notes, mode_sessions,
                                     reach_weight)
from stretto_core.flow.review import show
from stretto_core.serve.engine import Engine
from stretto_core.serve.modes import ModeShrunk, model_for_mode
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.store import write_session


def _solo(sessions):
    return [s.model_copy(update={"header": s.header.model_copy(update={"solo": True})}) for s in sessions]


def test_a_flow_counts_its_solo_sessions_and_merging_adds_them():
    solo = learn(_solo(shop_sessions(12)), MANIFEST)
    both = merge(solo, learn(shop_sessions(30)[12:], MANIFEST))
    assert mode_sessions(solo) == {USER_PRESENT: 0.0, SOLO: 12.0}
    assert mode_sessions(both) == {USER_PRESENT: 18.0, SOLO: 12.0}


def test_a_mode_learned_only_from_the_other_mode_is_served_by_the_habit_and_its_own_mode_by_the_reach():
    solo_only = learn(_solo(shop_sessions(12)), MANIFEST)
    assert reach_weight(solo_only, solo=True) == 1.0  # its own mode, however few: the learning curve's case
    assert reach_weight(solo_only, solo=False) == 0.0
    mixed = merge(solo_only, learn(shop_sessions(60)[12:], MANIFEST))
    assert reach_weight(mixed, solo=True) == pytest.approx(12 / MIN_MODE_SESSIONS)
    assert reach_weight(mixed, solo=False) == 1.0


def test_a_flow_learned_in_one_mode_keeps_its_reach_in_that_mode():
    flow = learn(shop_sessions(5), MANIFEST)
    assert reach_weight(flow, solo=False) == 1.0
    assert mode_notes(flow, (USER_PRESENT,)) == []


def test_the_shrunk_reach_is_the_weighed_mean_of_the_reach_and_the_habit():
    runtime = FlowRuntime(learn(shop_sessions(20), MANIFEST))
    history = ["get_user_details/ok/0"]
    shrunk = ModeShrunk(runtime, 0.25)
    checked = 0
    for tool in runtime.read_tools():
        r, p = runtime.reach(history, tool), runtime.next_step(history).get(tool, 0.0)
        assert shrunk.reach(history, tool) == pytest.approx(0.25 * r + 0.75 * p)
        checked += r != p
    assert checked > 0  # the reach and the habit differ somewhere, so the mean was exercised


def test_the_shrunk_reach_also_shrinks_the_reach_the_users_words_held_back():
    class HeldBack:  # a model whose intent rules halve every reach (FlowRuntime.reach_given's shape)
        def __init__(self, runtime):
            self.runtime, self.manifest = runtime, runtime.manifest

        def reach_given(self, history, tool, state, site):
            return 0.5 * self.runtime.reach(history, tool)

        def __getattr__(self, name):
            return getattr(self.runtime, name)

    runtime = FlowRuntime(learn(shop_sessions(20), MANIFEST))
    history = ["get_user_details/ok/0"]
    shrunk = ModeShrunk(HeldBack(runtime), 0.25)
    checked = 0
    for tool in runtime.read_tools():
        r, p = runtime.reach(history, tool), runtime.next_step(history).get(tool, 0.0)
        assert shrunk.reach_given(history, tool, None, "get_user_details") == pytest.approx(0.25 * 0.5 * r + 0.75 * p)
        checked += r > 0
    assert checked > 0  # some reach was held back and shrunk, not skipped past


def test_an_engine_session_of_either_mode_decides_with_the_flow_as_learned_by_default():
    engine = Engine(FlowRuntime(learn(_solo(shop_sessions(12)), MANIFEST)))
    assert engine.session(solo=True).model is engine.model
    assert engine.session(solo=False).model is engine.model


def test_the_shrinkage_serves_only_when_asked():
    runtime = FlowRuntime(learn(_solo(shop_sessions(12)), MANIFEST))
    assert model_for_mode(runtime, solo=False) is runtime
    shrunk = model_for_mode(runtime, solo=False, shrink=True)
    assert isinstance(shrunk, ModeShrunk) and shrunk.weight == 0.0
    assert model_for_mode(runtime, solo=True, shrink=True) is runtime


def test_a_replayed_session_of_the_other_mode_is_scored_by_the_reach_as_learned():
    flow = learn(_solo(shop_sessions(20)), MANIFEST)
    episodes = prepare_sessions(shop_sessions(30)[20:])
    result = replay_sessions(FlowRuntime(flow), episodes, ReplayOptions(weigh=True))
    assert result.weighed_rows
    assert any(row.reach > row.next_p + 1e-9 for row in result.weighed_rows)  # not the next-step probability


def test_a_flow_file_records_its_modes_and_one_without_them_is_served_as_before(tmp_path):
    path = tmp_path / "solo.flow.json"
    save_flow(learn(_solo(shop_sessions(8)), MANIFEST), path)
    assert mode_sessions(load_flow(path)) == {USER_PRESENT: 0.0, SOLO: 8.0}
    data = json.loads(path.read_text())
    for source in data["provenance"]["sources"]:
        del source["solo_sessions"]
    old = tmp_path / "old.flow.json"
    old.write_text(json.dumps(data))
    assert mode_sessions(load_flow(old)) is None
    assert reach_weight(load_flow(old), solo=False) == 1.0


def test_learn_and_flow_show_say_when_a_served_mode_has_too_few_sessions(tmp_path):
    folder = tmp_path / "sessions"
    for s in _solo(shop_sessions(6)):
        write_session(s, folder)
    out = tmp_path / "f.flow.json"
    said = CliRunner().invoke(app, ["learn", str(folder), "--split", "all", "--out", str(out)])
    assert said.exit_code == 0, said.output
    assert "sessions per mode: user present 0, solo 6" in said.output
    assert "note: user present: learned from 0 sessions of this mode" in said.output
    assert "served there with the reach as learned" in said.output
    assert "note: user present" in show(load_flow(out))
