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
