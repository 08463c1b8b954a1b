"""The class lift counted at fewer decisions (`lift_decisions`): where a mode says its counts are
the full counts, they are, on real sessions."""

from __future__ import annotations

from collections import Counter

import pytest

from real_corpora import CORPORA, corpus_fixture, corpus_sessions
from shared_data import full_data, published_data

from stretto_core.flow.ir import learn, manifest_of_sessions
from stretto_core.learn.bindings import evidence as bindings_learn
from stretto_core.learn.bindings import lift_decisions
from stretto_core.learn.bindings.lift_decisions import FULL, OFF, THIN, VISITED, decisions_counted, last_of_runs
from stretto_core.learn.bindings.model import BindingOptions
from stretto_core.learn.bindings.pick import pool_of
from stretto_core.learn.reads_ahead import reads_before_write
from stretto_core.sessions.model import ToolResult, UserMessage


corpus = corpus_fixture(sorted(CORPORA), named=True)


def _named(sessions, mode: str):
    return learn(sessions, binding_options=BindingOptions(class_lift=mode)).bindings.named


def _stand(state) -> tuple:
    """What a decision's fresh picks stand on: every pool (its results, by identity) and the user's words."""
    return state.user_version, tuple((tool, tuple(map(id, pool_of(state, tool)))) for tool in state.ok_results)


def _walks(sessions):
    """Each session with the corpus's manifest and the ids of the calls its user ran."""
    manifest = manifest_of_sessions(sessions, None)
    for session in sessions:
        yield session, manifest, {c.call_id for e in session.events if isinstance(e, UserMessage) for c in e.calls}


@full_data  # counts the cases it exercised: the sample holds too few
def test_a_decision_the_evidence_visits_stands_on_the_pools_and_words_the_evidence_reads_next(corpus, monkeypatch):
    name, sessions = corpus
    seen: Counter[str] = Counter()
    pending: list[tuple] = []
    count_decision, count_value = bindings_learn.count_decision, bindings_learn.count_value

    def decided(counts, state, called, weight=1.0):
        assert not pending, "a visited decision was not followed by the evidence"
        pending.append(_stand(state))
        seen["decisions"] += 1
        count_decision(counts, state, called, weight)

    def evidence(state, *args):
        if pending:
            assert pending.pop() == _stand(state), name
            seen["read by the evidence at the same pools and words"] += 1
        count_value(state, *args)

    monkeypatch.setattr(bindings_learn, "count_decision", decided)
    monkeypatch.setattr(bindings_learn, "count_value", evidence)
    learn(sessions, binding_options=BindingOptions(class_lift=VISITED))
    assert not pending
    assert seen["decisions"] == seen["read by the evidence at the same pools and words"] >= 40, seen


@full_data  # counts the cases it exercised: the sample holds too few
def test_a_run_of_parallel_results_shares_its_reads_ahead_and_its_last_stands_for_each_once(corpus):
    name, sessions = corpus
    seen: Counter[str] = Counter()
    for session, manifest, user_calls in _walks(sessions):
        later = reads_before_write(session, manifest, user_calls)
        decisions = [e.call_id for e in session.events if isinstance(e, ToolResult) and e.call_id not in user_calls]
        at = 0
        for last, run in last_of_runs(session, user_calls):
            members = decisions[at:at + run]
            assert members[-1] == last
            assert len({later.get(c) for c in members}) == 1, (session.session_id, members)
            seen["runs"] += 1
            seen["runs of two or more"] += run > 1
            at += run
        assert at == len(decisions), session.session_id
    assert seen["runs"] >= 100 and seen["runs of two or more"] >= (5 if name != "agentdojo" else 1), seen


@full_data  # counts the cases it exercised: the sample holds too few
def test_thin_counts_every_run_the_evidence_visits_at_its_size_and_draws_the_rest(corpus):
    name, sessions = corpus
    seen: Counter[str] = Counter()
    for session, manifest, user_calls in _walks(sessions):
        visited = set(lift_decisions.visited_by_evidence(session, manifest))
        thin = decisions_counted(session, manifest, THIN, user_calls)
        assert thin is not None
        runs = dict(last_of_runs(session, user_calls))
        assert set(thin) <= set(runs)
        for call_id, run in runs.items():
            if call_id in visited:
                assert thin[call_id] == run
                seen["visited"] += 1
            elif call_id in thin:
                assert thin[call_id] == run * lift_decisions.THIN_EVERY
                seen["drawn"] += 1
            else:
                seen["left out"] += 1
    assert seen["visited"] >= 40 and seen["drawn"] >= 10 and seen["left out"] >= 10, seen
    assert seen["drawn"] < seen["left out"], seen  # one in THIN_EVERY


@published_data
def test_every_decision_counted_at_weight_two_counts_twice_the_full_counts(monkeypatch, tmp_path):
    sessions = corpus_sessions("retail", tmp_path, most=30)
    full = _named(sessions, FULL)
    monkeypatch.setattr(bindings_learn, "decisions_counted",
                        lambda session, manifest, mode, user_calls=frozenset():
                        {e.call_id: 2.0 for e in session.events if isinstance(e, ToolResult)})
    doubled = _named(sessions, FULL)
    assert full.named_passed and full.other, "the passed-pick branch was exercised"
    for field in ("decisions", "named"):
        assert getattr(doubled, field) == {k: 2 * v for k, v in getattr(full, field).items()}, field
    for field in ("called", "called_named", "named_passed", "passed_named", "other", "called_other"):
        assert getattr(doubled, field) == {t: {k: 2 * v for k, v in row.items()}
                                           for t, row in getattr(full, field).items()}, field


@published_data
def test_off_counts_no_decision_and_an_unknown_mode_is_refused(tmp_path):
    sessions = corpus_sessions("retail", tmp_path, most=5)
    assert _named(sessions, OFF).decisions == {}
    with pytest.raises(ValueError, match="class lift mode is one of"):
        decisions_counted(sessions[0], manifest_of_sessions(sessions, None), "most")


@published_data
def test_stretto_learn_counts_the_lift_as_asked_full_by_default_and_refuses_an_unknown_mode(tmp_path):
    from typer.testing import CliRunner

    from stretto_core.cli import app

    corpus_sessions("retail", tmp_path / "s", most=1)  # ingests retail's sessions under s/0
    flows = {}
    for mode in (None, FULL, THIN, OFF):
        out = tmp_path / f"{mode}.json"
        got = CliRunner().invoke(app, ["learn", str(tmp_path / "s" / "0"), "--app", "tau2/retail", "--out", str(out)]
                                 + ([] if mode is None else ["--class-lift", mode]))
        assert got.exit_code == 0, got.output
        flows[mode] = out.read_bytes()
    assert flows[None] == flows[FULL]
    assert b'"class_lift":{"get_' in flows[THIN] and b'"class_lift":{"get_' not in flows[OFF]
    bad = CliRunner().invoke(app, ["learn", str(tmp_path / "s" / "0"), "--out", str(tmp_path / "x.json"),
                                   "--class-lift", "most"])
    assert bad.exit_code != 0 and "--class-lift is one of full, thin, visited, off" in str(bad.exception)
