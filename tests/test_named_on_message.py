"""When the user speaks, the held values they named are derived then, once, not at the next decision."""

from __future__ import annotations

import pytest

from shop_sessions import shop_flow, shop_sessions

from stretto_core.learn.bindings.pick import Holders, rename_held
from stretto_core.serve.engine import Engine, EngineConfig, EngineSession
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import LLMTurn, Session, ToolResult, UserMessage
from stretto_core.sessions.state import call_key


def _recorded(session: Session) -> dict[str, tuple[str, bool]]:
    calls = {c.call_id: c for e in session.events if isinstance(e, LLMTurn) for c in e.calls}
    return {call_key(calls[e.call_id].tool, calls[e.call_id].arguments): (e.content, e.error)
            for e in session.events if isinstance(e, ToolResult) and e.call_id in calls}


def _served(engine: Engine, session: Session, stop_before_user: int | None = None) -> tuple[EngineSession, list]:
    """The session served, lookups answered from the record; stopped before its n-th user message."""
    es = engine.session(live_manifest=engine.model.manifest)
    known = _recorded(session)
    agent = {c.call_id for e in session.events if isinstance(e, LLMTurn) for c in e.calls}
    made: list = []
    users = 0
    for event in session.events:
        if isinstance(event, UserMessage):
            users += 1
            if users == stop_before_user:
                break
        es.observe(event)
        if isinstance(event, ToolResult) and event.call_id in agent:
            made += [(lk.tool, lk.arguments, lk.score, lk.binding) for lk in
                     es.run_lookups(event.call_id, lambda t, a: known.get(call_key(t, a), ("{}", False)))]
    return es, made


def _held(es: EngineSession) -> list[Holders]:
    return [held for tag, held in es.state.views.items() if type(tag) is tuple and tag[0] == "p" and held.entries]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(FlowRuntime(shop_flow(20)), EngineConfig(per_session=10 ** 6, name_on_message=True))


def _a_session_read_before_a_user_message(engine: Engine) -> tuple[EngineSession, UserMessage]:
    """A test session served up to a user message, its decisions having read some holders."""
    for session in shop_sessions(30)[20:]:
        users = [e for e in session.events if isinstance(e, UserMessage)]
        for n in range(2, len(users) + 1):
            es, _ = _served(engine, session, stop_before_user=n)
            if any(held.read for held in _held(es)):
                return es, users[n - 1]
    raise AssertionError("no shop session read holders before a user message")


def test_the_user_speaking_names_the_holders_the_last_decision_read(engine: Engine) -> None:
    es, message = _a_session_read_before_a_user_message(engine)
    read = [held for held in _held(es) if held.read]
    es.observe(message)
    assert es.state.user_version > 0
    assert all(held.version == es.state.user_version for held in read)


def test_holders_are_named_once_between_two_decisions(engine: Engine) -> None:
    es, message = _a_session_read_before_a_user_message(engine)
    es.observe(message)
    assert not any(held.read for held in _held(es))
    es.observe(UserMessage(text="and another thing"))
    assert rename_held(es.state) == 0  # the next decision names them, as it did before


def test_decisions_are_the_same_whether_named_when_the_user_speaks_or_at_the_decision(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = shop_sessions(30)[20:]
    eager = [_served(engine, s)[1] for s in sessions]
    lazy_engine = Engine(FlowRuntime(shop_flow(20)), EngineConfig(per_session=10 ** 6))
    lazy = [_served(lazy_engine, s)[1] for s in sessions]
    assert sum(map(len, eager)) > 0
    assert eager == lazy


def test_by_default_the_decision_names_what_it_reads() -> None:
    engine = Engine(FlowRuntime(shop_flow(20)), EngineConfig(per_session=10 ** 6))
    es, message = _a_session_read_before_a_user_message(engine)
    read = [held for held in _held(es) if held.read]
    es.observe(message)
    assert all(held.version < es.state.user_version for held in read)
