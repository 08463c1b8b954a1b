"""Leaving one agent out across task folds: no held-out session shares a task or (for `others`) an
agent with the sessions its flow learns from, and the pooled row is the sum of the agents'."""

from __future__ import annotations

import pytest

from shop_sessions import shop_sessions

from stretto_core.errors import StrettoError
from stretto_core.evaluate.agent_sources import ALL_AGENTS, agent_cv, agent_folds, replay_bodies, source_bodies
from stretto_core.evaluate.site_calibration import fold_key
from stretto_core.sessions.agents import agent_key
from stretto_core.sessions.model import Session

AGENTS = ("acme-1", "beta-2", "gamma-3")


def as_agents(sessions: list[Session], agents=AGENTS, tasks: int = 8) -> list[Session]:
    """The shop's sessions as if several agents ran the same few tasks (as τ² agents do)."""
    return [s.model_copy(update={"header": s.header.model_copy(update={
        "agent_model": agents[i % len(agents)], "task_id": f"task-{i % tasks}"})}) for i, s in enumerate(sessions)]


def agent_of(s: Session) -> str:
    return agent_key(s.header.agent_model)


@pytest.fixture(scope="module")
def three() -> list[Session]:
    return as_agents(shop_sessions(24))


def test_a_held_out_agent_learns_from_no_session_of_its_fold_s_tasks_and_others_from_no_own(three) -> None:
    folds = agent_folds(three, folds=3)
    assert {f.agent for f in folds} == set(AGENTS)
    for f in folds:
        held_tasks = {fold_key(s) for s in f.held}
        assert {agent_of(s) for s in f.held} == {f.agent}
        for rule, body in f.learn_from.items():
            assert held_tasks.isdisjoint(fold_key(s) for s in body), rule
        assert f.agent not in {agent_of(s) for s in f.learn_from["others"]}
        assert {agent_of(s) for s in f.learn_from.get("own", [])} <= {f.agent}
        assert len(f.learn_from["all"]) == len(f.learn_from["others"]) + len(f.learn_from.get("own", []))
    held = [s.session_id for f in folds for s in f.held]
    assert sorted(held) == sorted(s.session_id for s in three)  # every session held out once


def test_one_agent_alone_cannot_be_left_out() -> None:
    with pytest.raises(StrettoError, match="needs sessions of two agents or more; these are all of acme-1"):
        agent_folds(as_agents(shop_sessions(6), agents=("acme-1",)))


def test_the_pooled_row_is_every_held_out_agent_s_episodes_each_served_by_its_own_flow(three) -> None:
    cells = {(c.learned_from, c.agent): c for c in agent_cv(three, ("full",), ("others", "own"), folds=2).cells(draws=50)}
    for rule in ("others", "own"):
        parts = [cells[(rule, a)] for a in AGENTS]
        pooled = cells[(rule, ALL_AGENTS)]
        assert pooled.episodes == sum(p.episodes for p in parts) == len(three)
        assert pooled.saved == sum(p.saved for p in parts) and pooled.detours == sum(p.detours for p in parts)
    assert sum(c.saved for c in cells.values()) > 0, "no lookup saved a turn: nothing was measured"


def test_each_train_agent_alone_and_all_together_replay_every_test_agent(three) -> None:
    train, test = three[:18], three[18:]
    bodies = source_bodies(train)
    assert set(bodies) == {*AGENTS, "all"} and len(bodies["all"]) == len(train)
    replays = replay_bodies(bodies, test, ("full",))
    assert {(label, agent) for _, label, agent in replays.results} == {
        (label, agent) for label in bodies for agent in (*AGENTS, ALL_AGENTS)}
    same = replays.compare("full", "all", "all")
    assert same is not None and same.saved == 0 and same.turns_saved.point == 0
