"""β, δ and θ* counted from sessions and a replay of them (paper Appendix B)."""

from __future__ import annotations

import json

import pytest

from stretto_core.cli import main
from stretto_core.evaluate.measure.costs import costs_by_app, theta_star
from stretto_core.evaluate.replay.run import replay_sessions
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.sessions.store import write_session
from test_replay_fakes import Script, Shop, shop_flow

EMAIL = {"email": "ann@x.org"}
USER = {"user_id": "u1"}
ORDER = {"order_id": "o1"}


def saved_then_detour(tokens: bool = True) -> list:
    """One episode whose get_user turn is saved, one whose lookup of get_user is a detour."""
    t = (lambda n: n) if tokens else (lambda n: None)
    shop = Shop()
    saved = (Script("saved").user("I am ann@x.org").agent(("find_user", EMAIL), tokens=t(1000)).play(shop)
             .agent(("get_user", USER), tokens=t(1200)).play(shop).agent(text="ok", tokens=t(1500)))
    shop = Shop()
    detour = (Script("detour").user("I am ann@x.org").agent(("find_user", EMAIL), tokens=t(1000)).play(shop)
              .agent(("cancel_order", ORDER), tokens=t(1100)).play(shop)
              .agent(text="cancelled", tokens=t(1300)))
    return [saved.session(), detour.session()]


def test_theta_star_is_the_detours_share_of_both_costs() -> None:
    assert theta_star(6000, 2530) == pytest.approx(2530 / 8530)
    assert theta_star(None, 100) is None


def test_beta_is_a_ceiling_turns_input_tokens_plus_its_calls_over_the_turns_after_it() -> None:
    episodes = prepare_sessions(saved_then_detour())
    replay = replay_sessions(shop_flow(get_user={}), episodes)
    [row] = costs_by_app(episodes, replay)
    user_json = Shop().call("get_user", USER)[0]
    call_tokens = (len('get_user{"user_id": "u1"}') + len(user_json)) / 4
    assert row.ceiling_turns == 1
    assert row.beta == pytest.approx(1200 + call_tokens * 1)


def test_delta_is_a_detours_result_tokens_times_the_turns_left() -> None:
    episodes = prepare_sessions(saved_then_detour())
    replay = replay_sessions(shop_flow(get_user={}), episodes)
    [row] = costs_by_app(episodes, replay)
    detour = next(r for r in replay.lookup_rows if r.detour)
    assert (row.detours, detour.turns_left) == (1, 2)
    assert row.delta == pytest.approx(detour.result_tokens * 2)
    assert row.theta_star == pytest.approx(row.delta / (row.beta + row.delta))


def test_without_reported_tokens_beta_and_theta_star_are_unknown() -> None:
    episodes = prepare_sessions(saved_then_detour(tokens=False))
    [row] = costs_by_app(episodes, replay_sessions(shop_flow(get_user={}), episodes))
    assert row.beta is None and row.theta_star is None and row.delta is not None


def test_the_costs_command_prints_and_writes_the_costs(tmp_path, capsys) -> None:
    for session in saved_then_detour():
        write_session(session, tmp_path / "sessions")
    replay = replay_sessions(shop_flow(get_user={}), saved_then_detour())
    (tmp_path / "replay.json").write_text(replay.model_dump_json())
    code = main(["costs", "--sessions", str(tmp_path / "sessions"), "--replay", str(tmp_path / "replay.json"),
                 "--json", str(tmp_path / "costs.json")])
    assert code == 0
    assert "θ*" in capsys.readouterr().out
    [row] = json.loads((tmp_path / "costs.json").read_text())
    assert row["app"] == "shop" and row["detours"] == 1


def test_the_costs_command_names_a_file_that_is_not_a_replay(tmp_path, capsys) -> None:
    (tmp_path / "replay.json").write_text('{"episodes": "many"}')
    write_session(saved_then_detour()[0], tmp_path)
    code = main(["costs", "--sessions", str(tmp_path), "--replay", str(tmp_path / "replay.json")])
    assert code == 2
    assert "replay.json: not a stretto replay" in capsys.readouterr().err
