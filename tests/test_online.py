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


def test_flow_stage_counts_served_sessions_by_the_rule_it_is_given(sessions, tmp_path) -> None:
    from stretto_core.cli import main
    from stretto_core.evaluate.served_loop import serve_batch
    from stretto_core.flow.ir import load_flow
    from stretto_core.sessions.store import write_session

    served, _ = serve_batch(learn(sessions[:10], MANIFEST), sessions[10:20])
    calls = {}
    for rule in ("drop", "said"):
        for s in served:
            write_session(s, tmp_path / rule / "sessions")
        assert main(["flow", "stage", str(tmp_path / rule), "--settled", "0", "--served-rule", rule]) == 0
        calls[rule] = load_flow(tmp_path / rule / "flow.staged.json").contracts.calls
    looked_up = sum(1 for s in served for e in s.events if e.kind == "lookup")
    assert looked_up > 0
    assert sum(calls["said"].values()) > sum(calls["drop"].values())
    assert main(["flow", "stage", str(tmp_path / "said"), "--served-rule", "everything"]) == 2


def test_flow_stage_with_a_prior_file_weighs_it_less_as_the_apps_own_sessions_are_staged(sessions, tmp_path, capsys) -> None:
    from stretto_core.cli import main
    from stretto_core.flow.ir import load_flow, save_flow
    from stretto_core.sessions.store import write_session

    others = sessions[:20]
    own = [s.model_copy(update={"header": s.header.model_copy(update={"task_id": None})})  # as an app records them
           for s in sessions[20:36]]
    dep = tmp_path / "app"
    save_flow(learn(others, MANIFEST), dep / "prior.flow.json")  # as `stretto learn OTHERS --out` writes it
    for s in own[:8]:
        write_session(s, dep / "sessions")
    assert main(["flow", "stage", str(dep), "--settled", "0", "--prior-half", "4"]) == 0
    first = load_flow(dep / "flow.staged.json")
    assert "weigh 33.3 sessions beside the app's own 8" in capsys.readouterr().out  # 100·4/(4+8)
    assert main(["flow", "commit", str(dep)]) == 0
    for s in own[8:]:
        write_session(s, dep / "sessions")
    assert main(["flow", "stage", str(dep), "--settled", "0", "--prior-half", "4"]) == 0
    assert "weigh 20.0 sessions beside the app's own 16" in capsys.readouterr().out
    second = load_flow(dep / "flow.staged.json")
    w = prior_weight_at(16, 100, 4)
    batch = learn(own, MANIFEST, prior=others, prior_weight=w)
    assert second.contracts.calls == batch.contracts.calls  # the counts of a batch learn at w(16), exactly
    assert sum(second.contracts.calls.values()) < sum(first.contracts.calls.values()) + sum(
        s_calls for s_calls in learn(own[8:], MANIFEST).contracts.calls.values())  # the prior's share fell
    assert main(["flow", "stage", str(dep), "--settled", "0", "--prior-half", "-1"]) == 2
