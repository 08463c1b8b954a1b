"""A session staged into a flow one at a time gives the bytes of a batch learn of them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared_data import published_data

from stretto_core.flow.ir import learn, load_flow, save_flow
from stretto_core.flow.staged import StagedFlow, stage_session
from stretto_core.learn import intent
from stretto_core.learn.intent import common_words
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.splits import split_of
from stretto_core.sessions.store import load_sessions


@pytest.fixture(scope="module")
def retail(tmp_path_factory: pytest.TempPathFactory) -> list:
    out = tmp_path_factory.mktemp("retail")
    ingest_files("tau2", [data_root() / "tau2" / "trajectories" / "retail"], out)
    train = [s for s in load_sessions([out]) if split_of(s.header) == "train"]
    assert len(train) >= 6
    return train


@published_data
def test_sessions_staged_one_at_a_time_into_a_saved_flow_write_the_batch_learns_bytes(retail, tmp_path: Path) -> None:
    half = len(retail) // 2
    save_flow(learn(retail[:half]), tmp_path / "flow.json")
    staged = StagedFlow(load_flow(tmp_path / "flow.json"))
    for session in retail[half:]:
        staged.add(session)
    assert staged.added == len(retail) - half
    assert staged.flow().to_json() == learn(retail).to_json()


@published_data
def test_a_staged_flow_writes_again_after_more_sessions_and_keeps_the_flow_it_wrote(retail) -> None:
    staged = StagedFlow(learn(retail[:2]))
    staged.add(retail[2])
    first = staged.flow()
    written = first.to_json()
    staged.add(retail[3])
    assert first.to_json() == written == learn(retail[:3]).to_json()
    assert staged.flow().to_json() == learn(retail[:4]).to_json()


@published_data
def test_a_session_staged_into_a_flow_with_a_prior_joins_its_data_not_its_prior(retail) -> None:
    prior, data = retail[:2], retail[2:5]
    flow = learn(data[:2], prior=prior, prior_weight=1.0)
    assert stage_session(flow, data[2]).to_json() == learn(data, prior=prior, prior_weight=1.0).to_json()


@published_data
def test_a_shared_flow_is_the_same_flow_written_without_a_copy(retail) -> None:
    staged = StagedFlow(learn(retail[:2]))
    staged.add(retail[2])
    shared = staged.flow(shared=True)
    assert shared.bindings is staged.bindings
    assert shared.to_json() == staged.flow().to_json() == learn(retail[:3]).to_json()


@published_data
def test_a_flow_refreshed_after_every_session_derives_the_batch_learns_intent_table_each_time(
        retail, monkeypatch: pytest.MonkeyPatch) -> None:
    # the intent table is derived again only for the sites a session touched, or in full when a
    # word joins the common words: both happen here (words cross MIN_SESSIONS as sessions come);
    # the rules' bars lowered so that a few sessions keep some (τ² train keeps none at the defaults)
    for name, value in (("MIN_SESSIONS", 3.0), ("MIN_Z", 0.5), ("MIN_LIFT", 1.05)):
        monkeypatch.setattr(intent, name, value)
    staged = StagedFlow(learn(retail[:6]))
    staged.flow(shared=True)
    common_sizes = set()
    for k in range(6, 14):
        staged.add(retail[k])
        got = staged.flow(shared=True)
        assert got.intent_table == learn(retail[:k + 1]).intent_table
        common_sizes.add(len(common_words(staged.intent)))
    assert len(common_sizes) > 1 and got.intent_table is not None and got.intent_table.rules


def test_shop_sessions_staged_and_refreshed_one_at_a_time_write_the_batch_learns_bytes_at_every_step() -> None:
    from shop_sessions import MANIFEST, shop_sessions

    sessions = shop_sessions(16)
    staged = StagedFlow(learn(sessions[:3], MANIFEST))
    staged.flow(shared=True)
    for k in range(3, len(sessions)):
        staged.add(sessions[k])
        assert staged.flow(shared=True).to_json() == learn(sessions[:k + 1], MANIFEST).to_json()
    assert staged.added == len(sessions) - 3


@published_data
def test_tau2_train_sessions_staged_and_refreshed_one_at_a_time_write_the_batch_learns_bytes_at_every_step(
        retail) -> None:
    # the refresh a server runs after every session: α's posteriors, the binding table, the intent
    # table and the pinned contracts derived from the live counts, the bytes of a batch learn
    staged = StagedFlow(learn(retail[:4]))
    staged.flow(shared=True)
    for k in range(4, 10):
        staged.add(retail[k])
        assert staged.flow(shared=True).to_json() == learn(retail[:k + 1]).to_json()


def test_a_refreshed_flow_holds_both_alphas_and_no_state_left_for_a_later_reader() -> None:
    # α's posteriors cost a third of a full grid (`learn/alpha_window.py`): a refresh derives them
    # at once, and the flow it serves keeps no deferred part (no private state at all)
    from shop_sessions import MANIFEST, shop_sessions

    sessions = shop_sessions(6)
    staged = StagedFlow(learn(sessions[:4], MANIFEST))
    staged.add(sessions[4])
    served = staged.flow(shared=True)
    own = learn(sessions[:5], MANIFEST)
    assert served.alpha == own.alpha and served.reach_alpha == own.reach_alpha
    assert not served.__pydantic_private__
