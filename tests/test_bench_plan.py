"""Whom each test agent's speculator learns from: other agents, or a labelled fallback."""

from __future__ import annotations

from stretto_core.evaluate.measure.bench_data import Corpus, agent_key, domain_of
from stretto_core.evaluate.measure.bench_plan import OTHER_AGENTS, learning_sessions
from stretto_core.sessions.splits import SplitFile
from test_measure_curves import sessions


def test_an_agent_is_its_model_whatever_the_provider_date_or_defence() -> None:
    assert agent_key("azure/gpt-4o-2024-11-20") == "gpt-4o"
    assert agent_key("gpt-4o-2024-05-13-tool_filter") == agent_key("gpt-4o-2024-05-13") == "gpt-4o"
    assert agent_key("claude-3-opus-20240229") == "claude-3-opus"
    assert agent_key("gpt-4.1-mini-2025-04-14") != agent_key("gpt-4.1")
    assert agent_key(None) == "unknown"


def corpus(*groups) -> Corpus:
    """Sessions on the given sides: (agent, side, count, solo)."""
    out, train, test = [], [], []
    start = 0
    for agent, side, count, solo in groups:
        for s in sessions(count, agent, start):
            s.header.task_id = f"{side}-{start}"
            s.header.solo = solo
            (train if side == "train" else test).append(s.header.task_id)
            out.append(s)
            start += 1
    return Corpus("shop", out, SplitFile(train=train, test=test))


def test_a_test_agent_learns_from_the_other_agents_train_sessions() -> None:
    c = corpus(("me", "train", 3, False), ("you", "train", 4, False), ("me", "test", 2, False))
    chosen, label, fallback = learning_sessions(c, "shop", "me")
    assert (len(chosen), label, fallback) == (4, OTHER_AGENTS, False)
    assert {s.header.agent_model for s in chosen} == {"you"}


def test_with_no_other_agent_it_falls_back_to_all_train_sessions_and_says_so() -> None:
    c = corpus(("me", "train", 3, False), ("me", "test", 2, False))
    chosen, label, fallback = learning_sessions(c, "shop", "me")
    assert len(chosen) == 3 and fallback and "no other agent" in label


def test_with_no_train_session_in_its_regime_it_falls_back_to_the_other_regime() -> None:
    c = corpus(("me", "train", 3, True), ("me", "test", 2, False))
    assert [domain_of(s.header) for s in c.on("test")] == ["shop", "shop"]
    chosen, label, fallback = learning_sessions(c, "shop", "me")
    assert len(chosen) == 3 and fallback and "shop (solo)" in label
