"""Intent counts added once per word and session are the counts added decision by decision."""

from __future__ import annotations

import pytest

from real_corpora import corpus_sessions
from shared_data import published_data
from stretto_core.learn.intent import IntentCounts, count_session, decisions_of


pytestmark = published_data  # real retail sessions: skipped in a clone without the published data


def _decision_by_decision(sessions, manifest, weight: float) -> IntentCounts:
    """The counts as their definition reads: every decision adds every word said so far."""
    counts = IntentCounts()
    for session in sessions:
        seen: set[str] = set()
        for site, words, reads in decisions_of(session, manifest):
            seen |= words
            counts.decisions[site] = counts.decisions.get(site, 0.0) + weight
            used = counts.used.setdefault(site, {})
            for tool in reads:
                used[tool] = used.get(tool, 0.0) + weight
            if words:
                said = counts.said.setdefault(site, {})
                for word in words:
                    said[word] = said.get(word, 0.0) + weight
                for tool in dict.fromkeys(reads):
                    row = counts.said_used.setdefault(site, {}).setdefault(tool, {})
                    for word in words:
                        row[word] = row.get(word, 0.0) + weight * list(reads).count(tool)
        for word in seen:
            counts.sessions[word] = counts.sessions.get(word, 0.0) + weight
    return counts


@pytest.fixture(scope="module")
def retail(tmp_path_factory):
    sessions = corpus_sessions("retail", tmp_path_factory.mktemp("retail"), most=40)
    return sessions, sessions[0].header.manifest


def _tables(counts: IntentCounts) -> list:
    return [counts.decisions, counts.used, counts.said, counts.said_used, counts.sessions]


def test_retail_s_word_counts_are_the_counts_added_decision_by_decision(retail) -> None:
    sessions, manifest = retail
    counts = IntentCounts()
    for session in sessions:
        count_session(counts, session, manifest)
    reference = _decision_by_decision(sessions, manifest, 1.0)
    assert _tables(counts) == _tables(reference)  # exactly: whole numbers add exactly in any grouping
    assert sum(len(row) for row in counts.said_used.values()) > 10  # words were counted with reads used


def test_at_another_weight_the_counts_are_those_of_the_decisions_to_rounding(retail) -> None:
    sessions, manifest = retail
    counts = IntentCounts()
    for session in sessions:
        count_session(counts, session, manifest, weight=0.3)
    reference = _decision_by_decision(sessions, manifest, 0.3)
    for mine, theirs in zip(_tables(counts), _tables(reference)):
        assert mine.keys() == theirs.keys()
    said, ref = counts.said, reference.said
    assert all(said[s][w] == pytest.approx(ref[s][w]) for s in ref for w in ref[s])
