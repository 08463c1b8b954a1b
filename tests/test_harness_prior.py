"""Learning for one agent from several harnesses: its own sessions, harness-mates and others as priors."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from stretto_core.cli import app
from stretto_core.errors import StrettoError
from stretto_core.evaluate.measure.harness_prior import (HarnessAgentCase, best_rule, harness_table,
                                                         render_harness_table, rule_name, winners)
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.flow.harness import ALL, DEFAULT_MATES, DEFAULT_OTHERS, learn_for_agent, parse_weight, split_for_agent
from stretto_core.flow.ir import learn
from stretto_core.sessions.store import write_session
from test_measure_curves import sessions


def _in(harness: str, batch):
    for s in batch:
        s.header.harness = harness
    return batch


def _three_ways():
    own = _in("h1", sessions(6, "me"))
    mates = _in("h1", sessions(5, "mate", start=100))
    others = _in("h2", sessions(7, "them", start=200))
    return own, mates, others


def test_an_agents_sessions_split_into_its_own_its_harness_mates_and_other_harnesses() -> None:
    own, mates, others = _three_ways()
    split = split_for_agent(own + mates + others, "me")
    assert (split.harness, len(split.own), len(split.mates), len(split.others)) == ("h1", 6, 5, 7)


def test_an_agent_that_ran_in_two_harnesses_must_have_its_harness_named() -> None:
    own, mates, others = _three_ways()
    elsewhere = _in("h2", sessions(2, "me", start=300))
    with pytest.raises(StrettoError, match="name its harness"):
        split_for_agent(own + elsewhere, "me")
    split = split_for_agent(own + mates + others + elsewhere, "me", "h2")
    assert len(split.own) == 2 and len(split.mates) == 7 and len(split.others) == 11


def test_harness_mates_at_full_weight_count_as_if_pooled_with_the_agents_own() -> None:
    own, mates, others = _three_ways()
    flow = learn_for_agent(own + mates + others, "me", mates=ALL, others=0)
    assert flow.table == learn(own + mates).table
    assert flow.counts == learn(own + mates).counts


def test_priors_weighing_nothing_leave_the_agents_own_flow() -> None:
    own, mates, others = _three_ways()
    flow = learn_for_agent(own + mates + others, "me", mates=0, others=0)
    assert flow.to_json() == learn(own).to_json()


def test_each_prior_records_what_one_of_its_sessions_weighs() -> None:
    own, mates, others = _three_ways()
    flow = learn_for_agent(own + mates + others, "me", mates=10, others=3.5)
    weights = {(s.role, tuple(s.agents)): (s.sessions, s.weight) for s in flow.provenance.sources}
    assert weights[("data", ("me",))] == (6, 1.0)
    assert weights[("prior", ("mate",))] == (5, 2.0)
    assert weights[("prior", ("them",))] == (7, 0.5)


def test_learning_with_one_prior_is_unchanged_by_the_priors_option() -> None:
    own, mates, _ = _three_ways()
    assert learn(own, prior=mates, prior_weight=3).to_json() == learn(own, priors=[(mates, 3)]).to_json()


def test_a_weight_is_all_or_a_number_of_sessions() -> None:
    assert parse_weight("all", 1.0) == ALL and parse_weight("30", ALL) == 30.0 and parse_weight(None, 7.0) == 7.0
    with pytest.raises(StrettoError, match="not 'lots'"):
        parse_weight("lots", 1.0)
    with pytest.raises(StrettoError, match="0 or more"):
        parse_weight("-1", 1.0)


def test_the_harness_table_runs_every_protocol_the_pools_allow_and_pools_them_per_domain() -> None:
    own, mates, others = _three_ways()
    split = split_for_agent(own + mates + others, "me")
    test = prepare_sessions(_in("h1", sessions(4, "me", start=400)))
    cells = harness_table([HarnessAgentCase("shop", split, test)], orders=1, draws=50)
    mine = {c.protocol for c in cells if c.agent == "me (h1)"}
    assert {"own", "mates", "others", "pooled", "mates@30+all", rule_name(ALL, 100.0)} <= mine
    assert not any(p.endswith("+10") for p in mine)  # 6 own sessions: "the first 10" is all of them
    pooled = {c.protocol: c for c in cells if c.agent == "All"}
    assert pooled["own"].kept == 1.0 and pooled["own"].episodes == 4
    assert best_rule(cells) is not None and "me (h1)" in " ".join(winners(cells))
    assert "Kept of own" in render_harness_table(cells)


def test_stretto_learn_for_an_agent_says_what_each_body_weighs(tmp_path) -> None:
    own, mates, others = _three_ways()
    for s in own + mates + others:
        write_session(s, tmp_path / "sessions")
    out = tmp_path / "flow.json"
    result = CliRunner().invoke(app, ["learn", str(tmp_path / "sessions"), "--split", "all", "--out", str(out),
                                      "--agent", "me", "--prior-harness-mates", "2"])
    assert result.exit_code == 0, result.output
    assert "from its 6 sessions, 5 of harness-mates weighing 2 and 7 of other harnesses weighing " \
           f"{DEFAULT_OTHERS:g}" in result.output
    assert DEFAULT_MATES == ALL and out.exists()
    pooled = CliRunner().invoke(app, ["learn", str(tmp_path / "sessions"), "--split", "all", "--out", str(out)])
    assert "of 2 harnesses, pooled" in pooled.output
