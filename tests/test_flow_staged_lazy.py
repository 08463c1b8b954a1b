"""A served refresh may leave α's posteriors to their first reader: the same bytes, the same decisions."""

from __future__ import annotations

import pytest

from shop_sessions import MANIFEST, shop_sessions

from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow import ir, staged as staged_module
from stretto_core.flow.ir import learn
from stretto_core.flow.staged import StagedFlow
from stretto_core.serve.runtime import FlowRuntime


def _count_alpha_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every α posterior derived from now on, by name, wherever it is derived."""
    calls: list[str] = []
    for module in (ir, staged_module):
        for name in ("alpha_posterior", "reach_alpha_posterior"):
            real = getattr(module, name)
            monkeypatch.setattr(module, name, lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
    return calls


def test_a_lazy_refresh_derives_neither_alpha_until_a_reader_asks_then_both_once(monkeypatch) -> None:
    sessions = shop_sessions(8)
    staged = StagedFlow(learn(sessions[:4], MANIFEST))
    staged.add(sessions[4])
    calls = _count_alpha_calls(monkeypatch)
    served = staged.flow(shared=True, lazy=True)
    assert calls == [] and served.alpha is None and served.reach_alpha is None
    assert served.table is not None and served.intent_table is not None and served.vocab
    FlowRuntime(served)
    assert sorted(calls) == ["alpha_posterior", "reach_alpha_posterior"]
    FlowRuntime(served)
    assert len(calls) == 2  # derived once, kept on that flow
    assert served.alpha == learn(sessions[:5], MANIFEST).alpha


def test_shop_sessions_refreshed_lazily_one_at_a_time_write_the_batch_learns_bytes_at_every_step() -> None:
    sessions = shop_sessions(12)
    staged = StagedFlow(learn(sessions[:3], MANIFEST))
    for k in range(3, len(sessions)):
        staged.add(sessions[k])
        assert staged.flow(shared=True, lazy=True).to_json() == learn(sessions[:k + 1], MANIFEST).to_json()


def test_a_lazy_shared_flow_read_after_the_next_session_still_has_the_alphas_of_its_own_counts() -> None:
    sessions = shop_sessions(8)
    staged = StagedFlow(learn(sessions[:4], MANIFEST))
    staged.add(sessions[4])
    served = staged.flow(shared=True, lazy=True)
    staged.add(sessions[5])  # the staged counts move on; the served flow's α must not
    own = learn(sessions[:5], MANIFEST)
    assert FlowRuntime(served).alpha == own.alpha.alpha and served.reach_alpha == own.reach_alpha
    assert own.alpha != learn(sessions[:6], MANIFEST).alpha


def test_a_served_flow_refreshed_lazily_decides_every_lookup_as_one_refreshed_eagerly() -> None:
    sessions = shop_sessions(24)
    train, held_out = sessions[:16], sessions[16:]
    lazy, eager = StagedFlow(learn(train[:8], MANIFEST)), StagedFlow(learn(train[:8], MANIFEST))
    options = ReplayOptions(weigh=True, processes=1)
    for session in train[8:]:
        lazy.add(session)
        eager.add(session)
        replays = [replay_sessions(FlowRuntime(flow), held_out, options)
                   for flow in (lazy.flow(shared=True, lazy=True), eager.flow(shared=True))]
        assert replays[0].model_dump_json() == replays[1].model_dump_json()
    assert replays[0].lookups > 0 and replays[0].weighed_rows
