"""The posterior chance of use: promotion's evidence is the score the speculator thresholds, and an agent
that does not read ahead gets a flow that backs off."""

from __future__ import annotations

import pytest

from shop_sessions import MANIFEST, shop_sessions
from stretto_core.evaluate.promotion import promote, weighed_candidates
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow.ir import learn
from stretto_core.flow.use_evidence import UseCount, UseEvidence, count_use, factor_of
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import LLMTurn, Session, ToolResult

KEPT_READS = {"find_user_id_by_email", "get_user_details"}


def terse(session: Session) -> Session:
    """The session as an agent that reads only the user's record would have had it: no order or
    product lookups of its own (it answers from what the user said)."""
    dropped = {c.call_id for e in session.events if isinstance(e, LLMTurn) for c in e.calls
               if MANIFEST.is_read(c.tool) and c.tool not in KEPT_READS}
    events = []
    for e in session.events:
        if isinstance(e, LLMTurn):
            calls = [c for c in e.calls if c.call_id not in dropped]
            if calls or e.text:
                events.append(e.model_copy(update={"calls": calls}))
        elif not (isinstance(e, ToolResult) and e.call_id in dropped):
            events.append(e)
    return session.model_copy(update={"events": events,
                                      "header": session.header.model_copy(update={"agent_model": "terse"})})


@pytest.fixture(scope="module")
def shop() -> tuple[list[Session], object]:
    sessions = shop_sessions(40)
    return sessions, learn(sessions[:20], MANIFEST)


def test_a_site_whose_candidates_are_never_used_is_scaled_towards_its_rate_and_never_raised() -> None:
    never = factor_of(n=40, score=40 * 0.5, used=0, prior=10)
    assert never == pytest.approx(10 * 0.5 / (20 + 10 * 0.5))  # 0.2: posterior 0.1 against the score 0.5
    assert factor_of(n=40, score=40 * 0.5, used=40, prior=10) == 1.0  # used more than scored: kept, not raised
    assert factor_of(n=0, score=0, used=0, prior=10, g=0.3) == 0.3  # nothing counted: the agent's back-off
    assert factor_of(n=1, score=0.5, used=0, prior=10) > 0.9  # one candidate: the score mostly stands


def test_the_agents_back_off_comes_from_its_own_evidence_only() -> None:
    train = UseCount(tool="t", site="s", role="train", weighed=100, score=50, used=0)
    own = UseCount(tool="t", site="s", role="own", weighed=30, score=15, used=1)
    assert UseEvidence(counts=[train]).agent_factor() == 1.0
    g = UseEvidence(agent_prior=10, counts=[train, own]).agent_factor()
    assert g == pytest.approx((1 + 10) / (15 + 10))
    factors, default = UseEvidence(agent_prior=10, counts=[train, own]).factors()
    assert default == g and factors[("t", "s", "plain")] < g  # the site's own counts pull it lower still


def test_count_use_leaves_out_candidates_scored_near_zero() -> None:
    rows = [(("t", "s", "plain"), 0.05, True), (("t", "s", "plain"), 0.5, False), (("t", "s", "plain"), 0.7, True)]
    (c,) = count_use(rows)
    assert (c.weighed, c.score, c.used) == (2, 1.2, 1)


def test_a_promoted_flow_serves_each_score_times_its_keys_factor(shop) -> None:
    sessions, flow = shop
    promoted = promote(flow, [terse(s) for s in sessions[20:30]])[0]
    assert promoted.promotion is not None and promoted.promotion.evidence is not None
    factors, g = promoted.promotion.evidence.factors()
    assert g < 1.0 and any(f < g for f in factors.values())
    raw, scaled = FlowRuntime(flow), FlowRuntime(promoted)
    rows = weighed_candidates(flow, sessions[30:32])
    assert rows
    checked = 0
    for s in sessions[30:32]:
        result = replay_sessions(raw, [s], ReplayOptions(processes=1, weigh=True))
        served = replay_sessions(scaled, [s], ReplayOptions(processes=1, weigh=True))
        before = {(w.decision, w.tool, w.site): w.binding for w in result.weighed_rows}
        for w in served.weighed_rows:
            b = before.get((w.decision, w.tool, w.site))
            if b is not None and b > 0:
                ratio = w.binding / b
                assert ratio <= 1 + 1e-9
                assert any(abs(ratio - f) < 1e-6 for f in (*factors.values(), g))  # exactly q·f_k
                checked += 1
    assert checked > 0


def test_an_agent_that_does_not_read_ahead_gets_a_flow_that_backs_off(shop) -> None:
    sessions, flow = shop
    early, later = [terse(s) for s in sessions[20:30]], [terse(s) for s in sessions[30:40]]
    promoted = promote(flow, early)[0]
    before = replay_sessions(FlowRuntime(flow), later, ReplayOptions(processes=1))
    after = replay_sessions(FlowRuntime(promoted), later, ReplayOptions(processes=1))
    assert before.detours > 0
    assert after.detours < before.detours / 2
    assert after.turns_saved >= before.turns_saved  # what it did read is still served


def test_an_agent_that_reads_ahead_keeps_its_savings(shop) -> None:
    sessions, flow = shop
    promoted = promote(flow, sessions[20:30])[0]
    before = replay_sessions(FlowRuntime(flow), sessions[30:40], ReplayOptions(processes=1))
    after = replay_sessions(FlowRuntime(promoted), sessions[30:40], ReplayOptions(processes=1))
    assert before.turns_saved > 0 and after.turns_saved >= before.turns_saved * 0.9


def test_with_hold_a_key_whose_mean_posterior_is_under_theta_makes_no_lookup(shop) -> None:
    sessions, flow = shop
    promoted = promote(flow, [terse(s) for s in sessions[20:30]])[0]
    assert promoted.promotion is not None and promoted.promotion.evidence is not None
    evidence = promoted.promotion.evidence.model_copy(update={"hold": True})
    held = evidence.held(promoted.promotion.theta_star)
    assert held
    holding = promoted.model_copy(update={"promotion": promoted.promotion.model_copy(update={"evidence": evidence})})
    later = [terse(s) for s in sessions[30:40]]
    scaled = replay_sessions(FlowRuntime(flow), later, ReplayOptions(processes=1))
    made = {(r.tool, r.site) for r in scaled.lookup_rows}
    assert any((tool, site) in made for tool, site, _ in held)
    after = replay_sessions(FlowRuntime(holding), later, ReplayOptions(processes=1))
    assert not any((r.tool, r.site, "plain") in held for r in after.lookup_rows)


def test_the_cli_counts_train_evidence_beside_the_agents_own(shop, tmp_path, capsys) -> None:
    from stretto_core.cli import main
    from stretto_core.flow.ir import load_flow, save_flow
    from stretto_core.sessions.store import write_session

    sessions, flow = shop
    for s in sessions[:20]:
        write_session(s, tmp_path / "train")
    for s in sessions[20:30]:
        write_session(terse(s), tmp_path / "own")
    save_flow(flow, tmp_path / "app.flow.json")
    assert main(["flow", "promote", str(tmp_path / "app.flow.json"), "--sessions", str(tmp_path / "own"),
                 "--train-sessions", str(tmp_path / "train")]) == 0
    assert "the agent's back-off g = " in capsys.readouterr().out
    promoted = load_flow(tmp_path / "app.flow.json")
    assert promoted.promotion is not None and promoted.promotion.evidence is not None
    roles = {c.role for c in promoted.promotion.evidence.counts}
    assert roles == {"train", "own"}
    assert main(["flow", "promote", str(tmp_path / "app.flow.json"), "--sessions", str(tmp_path / "own"),
                 "--agent-prior", "-1"]) == 2
