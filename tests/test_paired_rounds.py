"""The paired served-loop score: a relearned flow and the unserved one, replayed on the same sessions."""

from __future__ import annotations

import pytest

from shop_sessions import MANIFEST, shop_sessions
from stretto_core.evaluate.measure.bootstrap import Interval
from stretto_core.evaluate.paired_rounds import folds_of, relative_difference, run_paired, verdict
from stretto_core.evaluate.served_loop import RoundScore, serve_batch
from stretto_core.flow.ir import learn
from stretto_core.sessions.model import LLMTurn, Session, ToolResult


def without_tool(session: Session, tool: str) -> Session:
    """The session as if the agent had never called `tool` (its calls and results gone)."""
    gone = {c.call_id for c in session.agent_calls() if c.tool == tool}
    events = []
    for event in session.events:
        if isinstance(event, LLMTurn) and event.calls:
            kept = [c for c in event.calls if c.call_id not in gone]
            if kept or event.text:
                events.append(event.model_copy(update={"calls": kept}))
        elif not (isinstance(event, ToolResult) and event.call_id in gone):
            events.append(event)
    return Session(header=session.header, events=events)


@pytest.fixture(scope="module")
def sessions() -> list[Session]:
    return shop_sessions(40)


def test_a_flow_replayed_beside_itself_differs_by_exactly_nothing(sessions) -> None:
    score = serve_batch(learn(sessions[:20], MANIFEST), sessions[20:])[1]
    assert score.saved > 0 and score.detours > 0
    saved, detours = relative_difference(score, score)
    assert saved == detours == Interval(point=0.0, low=0.0, high=0.0)
    assert verdict(saved) == verdict(detours) == "within"


def test_a_flow_that_dropped_a_site_scores_fewer_saves_beyond_ten_percent(sessions) -> None:
    reference = serve_batch(learn(sessions[:20], MANIFEST), sessions[20:])[1]
    dropped = serve_batch(learn([without_tool(s, "get_order_details") for s in sessions[:20]], MANIFEST),
                          sessions[20:])[1]
    saved, _ = relative_difference(dropped, reference)
    assert saved.point < -0.1 and saved.high < -0.1
    assert verdict(saved) == "off"


def test_a_difference_whose_interval_straddles_ten_percent_is_unresolved() -> None:
    assert verdict(Interval(point=-0.04, low=-0.15, high=0.02)) == "unresolved"
    assert verdict(Interval(point=-0.04, low=-0.09, high=0.02)) == "within"
    assert verdict(Interval(point=0.3, low=0.12, high=0.5)) == "off"
    assert verdict(Interval(point=None)) == "unresolved"


def test_replays_of_different_episodes_are_refused_as_a_pair() -> None:
    a = RoundScore(episodes=1, saved=1, by_episode=[("t1", 1, 0)])
    b = RoundScore(episodes=1, saved=1, by_episode=[("t2", 1, 0)])
    with pytest.raises(ValueError, match="same episodes"):
        relative_difference(a, b)


def test_folds_cut_every_session_into_one_fold_in_the_order_given(sessions) -> None:
    cut = folds_of(sessions, 2)
    assert sorted(s.session_id for f in cut for s in f) == sorted(s.session_id for s in sessions)
    assert all(len(f) >= 10 for f in cut)
    position = {s.session_id: n for n, s in enumerate(sessions)}
    assert all([position[s.session_id] for s in f] == sorted(position[s.session_id] for s in f) for f in cut)
    assert [[s.session_id for s in f] for f in folds_of(sessions, 2)] == [[s.session_id for s in f] for f in cut]
    with pytest.raises(ValueError, match="2 folds or more"):
        folds_of(sessions, 1)


def test_each_round_is_scored_on_every_session_by_flows_that_did_not_learn_from_it(sessions) -> None:
    paired = run_paired(sessions, ["drop", "weighed"], rounds=3, learn_flow=lambda ss: learn(list(ss), MANIFEST))
    assert set(paired) == {"drop", "weighed"}
    for rounds in paired.values():
        assert len(rounds) == 3
        for pair in rounds:
            assert pair.rule.episodes == pair.reference.episodes == len(sessions)
            assert [t for t, _, _ in pair.rule.by_episode] == [t for t, _, _ in pair.reference.by_episode]
    last_drop, _ = paired["drop"][-1].differences()
    assert last_drop.point < 0  # dropping stretto's lookups unlearns where the flow served
