"""What a proxy between the agent and its tools sees of a session: its calls and their results."""

from __future__ import annotations

from shared_data import published_data

from stretto_core.evaluate.scripted import load_fixture_episodes
from stretto_core.sessions.model import LLMTurn, ToolResult, UserMessage
from stretto_core.sessions.views import as_seen_by_a_proxy


@published_data
def test_a_proxy_sees_no_user_words_and_no_replies_but_every_call_and_result() -> None:
    session = load_fixture_episodes("tau2/retail", split="test")[0]
    seen = as_seen_by_a_proxy(session)
    assert any(isinstance(e, UserMessage) for e in session.events), "nothing to hide: proves nothing"
    assert any(isinstance(e, LLMTurn) and not e.calls for e in session.events)
    assert not any(isinstance(e, UserMessage) for e in seen.events)
    assert all(isinstance(e, LLMTurn) and e.calls and not e.text for e in seen.events if e.kind == "llm_turn")
    assert seen.agent_calls() == session.agent_calls()
    assert [e for e in seen.events if isinstance(e, ToolResult)] == \
        [e for e in session.events if isinstance(e, ToolResult)]
    assert session.events[0].kind == "user", "the original is left as it was"
