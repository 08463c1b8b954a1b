"""The library entry points: many episodes, several thresholds, several processes, one answer."""

from __future__ import annotations

import pytest

from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.errors import StrettoError
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions, replay_thetas
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.evaluate.replay.summary import render_summary, summarize
from test_replay_fakes import Script, Shop, shop_flow

EMAIL = {"email": "ann@x.org"}
USER = {"user_id": "u1"}


def episode(n: int) -> Script:
    """Episodes that vary: some read the user right away, some after a write, some read an order."""
    shop = Shop()
    script = Script(session_id=f"s{n:03d}").user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop)
    if n % 3 == 1:
        script.agent(("cancel_order", {"order_id": "o1"})).play(shop)
    script.agent(("get_user", USER)).play(shop)
    if n % 2 == 0:
        script.agent(("get_order", {"order_id": "o1"})).play(shop)
    return script.agent(text="Done.")


def sessions(count: int):
    return [episode(n).session() for n in range(count)]


def flow():
    return shop_flow(get_user={"get_order": 0.45})


def dump(result) -> str:
    return result.model_dump_json()


def test_replays_at_several_thresholds_equal_replays_at_each_one() -> None:
    eps = prepare_sessions(sessions(12))
    thetas = [0.5, 0.1, 0.3, 0.95]
    swept = replay_thetas(flow(), eps, thetas, ReplayOptions(weigh=True, processes=1))
    assert sorted(swept) == sorted(thetas)
    for theta in thetas:
        alone = replay_sessions(flow(), eps, ReplayOptions(theta=theta, weigh=True, processes=1))
        assert dump(swept[theta]) == dump(alone), theta
    assert swept[0.1].lookups > swept[0.5].lookups > swept[0.95].lookups == 0


def test_a_sweep_replays_an_episode_again_only_where_a_decision_would_change() -> None:
    replays = []

    class CountingEngine(Engine):
        def session(self, live_manifest=None, **options):
            replays.append(self.config.theta)
            return super().session(live_manifest, **options)

    eps = prepare_sessions(sessions(6))
    # get_user scores 0.9 and get_order 0.45: 0.5 and 0.6 decide alike, 0.4 does not
    replay_thetas(lambda config: CountingEngine(flow(), config), eps, [0.4, 0.5, 0.6],
                  ReplayOptions(processes=1))
    # every episode looks up get_order at 0.4, so each is replayed again at 0.5, and reused at 0.6
    assert (replays.count(0.4), replays.count(0.5), replays.count(0.6)) == (6, 6, 0)


def test_a_site_threshold_is_honoured_when_a_sweep_reuses_a_replay() -> None:
    f = flow()
    f.thresholds = {"get_user": 0.5}  # get_order after get_user needs 0.5 whatever θ is
    eps = prepare_sessions(sessions(6))
    swept = replay_thetas(f, eps, [0.1, 0.3], ReplayOptions(processes=1))
    for theta in (0.1, 0.3):
        assert dump(swept[theta]) == dump(replay_sessions(f, eps, ReplayOptions(theta=theta, processes=1)))


def test_two_processes_give_the_rows_of_one_in_the_same_order() -> None:
    eps = prepare_sessions(sessions(60))
    one = replay_sessions(flow(), eps, ReplayOptions(processes=1, weigh=True))
    two = replay_sessions(flow(), eps, ReplayOptions(processes=2, weigh=True))
    assert dump(one) == dump(two)
    assert [r.session_id for r in two.episode_rows] == [f"s{n:03d}" for n in range(60)]


def test_a_sweep_on_two_processes_equals_one_on_one() -> None:
    eps = prepare_sessions(sessions(45))
    one = replay_thetas(flow(), eps, [0.2, 0.5], ReplayOptions(processes=1))
    two = replay_thetas(flow(), eps, [0.2, 0.5], ReplayOptions(processes=2))
    assert all(dump(one[t]) == dump(two[t]) for t in (0.2, 0.5))


def test_an_engine_or_an_engine_factory_serves_like_the_flow_itself() -> None:
    eps = prepare_sessions(sessions(6))
    options = ReplayOptions(theta=0.4)
    by_flow = replay_sessions(flow(), eps, options)
    by_engine = replay_sessions(Engine(flow(), EngineConfig(theta=0.9)), eps, options)
    by_factory = replay_sessions(lambda config: Engine(flow(), config), eps, options)
    assert dump(by_flow) == dump(by_engine) == dump(by_factory)


def test_the_totals_sit_at_the_top_of_the_result() -> None:
    result = replay_sessions(flow(), sessions(6))
    data = result.model_dump()
    for key in ("llm_turns", "turns_saved", "detours", "lookups", "ceiling_turns"):
        assert data[key] == sum(r[key] for r in data["episode_rows"]), key
    assert data["episodes"] == len(data["episode_rows"]) == 6


def test_the_summary_shows_the_share_saved_the_detours_and_the_share_of_the_ceiling() -> None:
    result = replay_sessions(flow(), sessions(6))
    row = summarize(result)[0]
    assert row.saved_share == result.turns_saved / result.llm_turns
    assert row.ceiling_share == result.turns_saved / result.ceiling_turns
    text = render_summary(result)
    assert "Share of ceiling" in text and "from the record" in text


def test_an_unknown_policy_is_refused_by_name() -> None:
    with pytest.raises(StrettoError, match="policy must be one of use, next"):
        ReplayOptions(policy="best")


def test_a_threshold_outside_zero_and_one_is_refused() -> None:
    with pytest.raises(StrettoError, match="between 0 and 1"):
        ReplayOptions(theta=1.5)


def _replay_many_in_a_worker(count: int) -> int:
    return replay_sessions(flow(), sessions(count), ReplayOptions(processes=2)).episodes


def test_a_replay_inside_another_pools_worker_runs_in_that_worker() -> None:
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.map(_replay_many_in_a_worker, [41]) == [41]
