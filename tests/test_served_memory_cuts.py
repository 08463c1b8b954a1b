"""A served session keeps only what a next decision can read (issue 30: served memory per session)."""

from __future__ import annotations

import pytest

from shop_sessions import shop_flow, shop_sessions

from stretto_core.learn.bindings import pick
from stretto_core.learn.bindings.pick import Holders
from stretto_core.serve.engine import Engine, EngineConfig, EngineSession
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.serve.stale import per_version
from stretto_core.sessions.focus import Focus, index_focused
from stretto_core.sessions.manifest import ToolKind, ToolManifest, ToolSpec
from stretto_core.sessions.model import LLMTurn, Session, ToolResult, UserMessage
from stretto_core.sessions.state import ToolState, call_key
from stretto_core.sessions.user_text import UserText
from stretto_core.sessions.values import index_result


def _served(engine: Engine, session: Session, until_user: int | None = None) -> tuple[EngineSession, list]:
    """The session served (lookups answered from the record), up to and with its n-th user message."""
    calls = {c.call_id: c for e in session.events if isinstance(e, LLMTurn) for c in e.calls}
    known = {call_key(calls[e.call_id].tool, calls[e.call_id].arguments): (e.content, e.error)
             for e in session.events if isinstance(e, ToolResult) and e.call_id in calls}
    es = engine.session(live_manifest=engine.model.manifest)
    made: list = []
    users = 0
    for event in session.events:
        es.observe(event)
        if isinstance(event, UserMessage):
            users += 1
            if users == until_user:
                break
        if isinstance(event, ToolResult) and event.call_id in calls:
            made += [(lk.tool, lk.arguments, lk.score, lk.binding) for lk in
                     es.run_lookups(event.call_id, lambda t, a: known.get(call_key(t, a), ("{}", False)))]
    return es, made


def _entries(es: EngineSession) -> list:
    return [entry for window in es.state.ok_results.values() for entry in window]


def _namings(es: EngineSession) -> int:
    return sum(per_version(tag) for entry in _entries(es) for tag in entry.cache)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(FlowRuntime(shop_flow(20)), EngineConfig(per_session=10 ** 6))


def _named_then_spoken(engine: Engine) -> EngineSession:
    """A test session served to its end, its decisions having named held results, then the user speaks."""
    es, made = _served(engine, shop_sessions(30)[20])
    assert made and _namings(es) > 0
    version = es.state.user_version
    es.observe(UserMessage(text="and what about the lamp?"))
    assert es.state.user_version == version + 1
    return es


def test_when_the_user_speaks_a_served_session_keeps_no_naming_of_their_earlier_words(engine: Engine) -> None:
    es = _named_then_spoken(engine)
    assert _entries(es)
    assert _namings(es) == 0
    held = [h for h in es.state.views.values() if type(h) is Holders]
    assert held and all(h.version == -1 and h.views is None and h.picks is None for h in held)


def test_what_a_results_values_alone_give_stays_when_the_user_speaks(engine: Engine) -> None:
    es = _named_then_spoken(engine)
    kept = [tag for entry in _entries(es) for tag in entry.cache]
    assert "said" in kept  # the values the user wrote, read again only in the messages since
    assert any(entry.index_views for entry in _entries(es))


def test_decisions_are_the_same_whether_the_stale_namings_are_dropped_or_kept(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = shop_sessions(30)[20:]
    dropping = [_served(engine, s)[1] for s in sessions]
    monkeypatch.setattr(FlowRuntime, "forget_stale", lambda self, state: None)
    keeping = [_served(engine, s)[1] for s in sessions]
    assert sum(map(len, dropping)) > 0
    assert dropping == keeping


def test_a_full_state_forgets_nothing_when_the_user_speaks(engine: Engine) -> None:
    session = next(s for s in shop_sessions(30)[20:] if sum(isinstance(e, UserMessage) for e in s.events) > 1)
    es = engine.session(live_manifest=engine.model.manifest, served=False)
    calls: list = []
    monkey = FlowRuntime.forget_stale
    try:
        FlowRuntime.forget_stale = lambda self, state: calls.append(state)  # type: ignore[method-assign]
        for event in session.events:
            es.observe(event)
    finally:
        FlowRuntime.forget_stale = monkey  # type: ignore[method-assign]
    assert calls == []


def test_holders_naming_nothing_share_the_one_empty_set() -> None:
    held = Holders([], [])
    pick._name(held, [], 3)
    assert held.version == 3 and not held.flagged
    assert held.flagged is pick._NOTHING


TEXT = ('{"user_id": "mia_1", "items": [{"name": "Blue Lamp", "item_id": "1001", "extra": {"a1b2": 1}}], '
        '"by_code": {"X100": "one", "X200": "two"}}')


def test_a_served_index_holds_a_records_field_names_only_where_a_source_reads_them() -> None:
    listing = index_focused(TEXT, None, Focus.of_sources([("t", "$.items[*].item_id")]).of("t"))
    assert "$.items[*].name" in listing.by_path and "$.items[*].*~" not in listing.by_path
    assert "$.items[*].extra.*~" not in listing.by_path
    assert "a1b2" in listing.keyish  # a field name that looks like a key is still seen
    read = Focus.of_sources([("t", "$.items[*].item_id"), ("t", "$.items[*].extra.*~"), ("t", "$.by_code.*~")])
    names = index_focused(TEXT, None, read.of("t"))
    assert list(names.by_path["$.items[*].extra.*~"]) == ["a1b2"]
    assert list(names.by_path["$.by_code.*~"]) == ["X100", "X200"]
    assert "$.items[*].*~" not in names.by_path


def test_a_value_passed_and_the_result_it_points_to_keep_one_string() -> None:
    manifest = ToolManifest(tools={"get_order": ToolSpec(kind=ToolKind.read)})
    state = ToolState(manifest, served=True, focus=Focus.of_sources([("get_order", "$.items[*].item_id")]))
    state.observe_call("c1", "get_order", {"order_id": "#W" + "1234"})
    state.observe_result("c1", "get_order", '{"items": [{"item_id": "1001"}]}', None, False)
    passed = state.passed_values("get_order", "order_id")
    (key,) = [k for k in state.result_for if k[:2] == ("get_order", "order_id")]
    assert list(passed) == ["#w1234"] and key[2] == "#w1234"
    assert key[2] is next(iter(passed))


def test_a_served_users_text_keeps_no_latest_places_of_earlier_messages() -> None:
    served, full = UserText(limit=64 * 1024), UserText()
    for text in (served, full):
        text.add("i want the blue lamp")
        assert text.latest("lamp", True) == (0, 16)
    served.add("and a chair")
    full.add("and a chair")
    assert served._latest == {} and full._latest != {}
    assert served.latest("lamp", True) == full.latest("lamp", True) == (0, 16)
    assert served.latest("chair", True) == full.latest("chair", True) == (1, 6)


def test_a_result_index_has_no_attribute_table_of_its_own() -> None:
    focused = index_focused(TEXT, None, Focus.of_sources([("t", "$.items[*].item_id")]).of("t"))
    assert not hasattr(focused, "__dict__") and not hasattr(index_result(TEXT), "__dict__")
    assert sorted(focused.all_keys) == ["1", "1001", "blue lamp"]  # each once, none of the field names


def test_the_key_like_values_out_of_focus_are_the_full_indexs_whatever_their_script() -> None:
    text = ('{"a": {"b": "AB12", "c": "no digits here", "d": " Ünit 1234 ", "e": 98765, "f": "x²yz", '
            '"g": "١٢٣٤٥", "h": 12.5, "i": true}, "items": [{"item_id": "1001"}]}')
    focused = index_focused(text, None, Focus.of_sources([("t", "$.items[*].item_id")]).of("t"))
    full = index_result(text)
    assert set(focused.keyish) == {k for k in full.first_path if len(k) >= 4 and any(c.isdigit() for c in k)}
    assert {"ab12", "ünit 1234", "98765", "x²yz", "١٢٣٤٥", "1001"} <= set(focused.keyish)


def test_a_views_single_addresses_are_the_processs_one_tuple_and_the_table_stays_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from stretto_core.sessions import shared_tuples

    first = shared_tuples.frozen({"lamp": [(3,)], "chair": [(0,), (2,)]})
    second = shared_tuples.frozen({"lamp": [(3,)]})
    assert first == {"lamp": ((3,),), "chair": ((0,), (2,))}
    assert first["lamp"] is second["lamp"] is shared_tuples.shared(((3,),))
    monkeypatch.setattr(shared_tuples, "_shared", {})
    monkeypatch.setattr(shared_tuples, "MAX_SHARED", 2)
    shared_tuples.frozen({i: [(i,)] for i in range(5)})
    assert shared_tuples.shared_count() == 2
