"""A flow learning as sessions arrive is, at every n, byte for byte the flow learned at once from the same sessions."""

from __future__ import annotations

import pytest

from shop_sessions import MANIFEST, shop_sessions
from stretto_core.flow.ir import learn
from stretto_core.flow.online import Staged, prior_counts
from stretto_core.learn.served import prior_weight_at


@pytest.fixture(scope="module")
def sessions():
    return shop_sessions(40)


def test_staging_new_sessions_as_they_arrive_equals_learning_them_at_once(sessions) -> None:
    staged = Staged(own=None, manifest=MANIFEST)
    seen = []
    for chunk in (sessions[:3], sessions[3:10], sessions[10:11], sessions[11:30]):
        staged.add(chunk)
        seen += chunk
        assert staged.sessions == len(seen)
        assert staged.flow().to_json() == learn(seen, MANIFEST).to_json()


def test_with_a_prior_whose_weight_falls_the_staged_flow_equals_the_batch_learn_at_that_weight(sessions) -> None:
    others, own = sessions[:20], sessions[20:]
    staged = Staged(own=None, prior=prior_counts(others, MANIFEST), w0=100, half=5, manifest=MANIFEST)
    seen = []
    for chunk in (own[:2], own[2:5], own[5:20]):
        staged.add(chunk)
        seen += chunk
        w = prior_weight_at(len(seen), 100, 5)
        assert staged.prior_weight() == w
        assert staged.flow().to_json() == learn(seen, MANIFEST, prior=others, prior_weight=w).to_json()
    assert staged.prior_weight() == pytest.approx(100 * 5 / 25)


def test_staging_served_sessions_counts_them_as_the_rule_teaches_and_remembers_the_recorded_ones(sessions) -> None:
    from stretto_core.evaluate.served_loop import serve_batch
    from stretto_core.flow.online import count_taught
    from stretto_core.learn.served import teaching_sessions
    from stretto_core.sessions.fingerprint import session_fingerprint

    served, _ = serve_batch(learn(sessions[:10], MANIFEST), sessions[10:20])
    for rule in ("drop", "said"):
        counted = count_taught(served, MANIFEST, rule)
        assert counted is not None
        batch = learn(list(teaching_sessions(served, rule)), MANIFEST)
        assert counted.derive().counts == batch.counts
        assert counted.provenance.learned == sorted(session_fingerprint(s) for s in served)
    assert count_taught([s for s in served if any(e.kind == "lookup" for e in s.events)], MANIFEST, "holdout") is None
