"""A served session keeps only what a decision can use, and decides as the full state does."""

from __future__ import annotations

import json
import random

import pytest

from shared_data import published_data

from stretto_core.evaluate.scripted import fixture_flow, load_fixture_episodes
from stretto_core.serve.engine import KEPT_HISTORY, Engine, EngineConfig
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.focus import Focus, holds_key, index_focused
from stretto_core.sessions.model import LLMTurn, Session, ToolResult, UserMessage
from stretto_core.sessions.manifest import ToolKind, ToolManifest, ToolSpec
from stretto_core.sessions.state import CALL_RESULT_KEYS, SERVED_CALL_RESULTS, ToolState, call_key
from stretto_core.sessions import user_text
from stretto_core.sessions.user_text import UserText, find_word
from stretto_core.sessions.values import index_result


def recorded(session: Session) -> dict[str, tuple[str, bool]]:
    calls = {c.call_id: c for e in session.events if isinstance(e, LLMTurn) for c in e.calls}
    out: dict[str, tuple[str, bool]] = {}
    for e in session.events:
        if isinstance(e, ToolResult) and e.call_id in calls:
            out.setdefault(call_key(calls[e.call_id].tool, calls[e.call_id].arguments), (e.content, e.error))
    return out


def serve(engine: Engine, events, known, served: bool):
    """The events served (lookups answered from the record), the tools' kinds from the episodes' manifest."""
    es = engine.session(live_manifest=engine.model.manifest, served=served)
    agent = {c.call_id for e in events if isinstance(e, LLMTurn) for c in e.calls}
    made = []
    for event in events:
        es.observe(event)
        if isinstance(event, ToolResult) and event.call_id in agent:
            made += [(lk.tool, lk.arguments, lk.score) for lk in
                     es.run_lookups(event.call_id, lambda t, a: known.get(call_key(t, a), ("{}", False)))]
    return es, made


def one_after_another(sessions: list[Session], times: int):
    """The sessions played in one long session, call ids kept apart."""
    events, known = [], {}
    for k in range(times):
        s = sessions[k % len(sessions)]
        known.update(recorded(s))
        for e in s.events:
            if isinstance(e, (LLMTurn, UserMessage)):
                e = e.model_copy(update={"calls": [c.model_copy(update={"call_id": f"{k}-{c.call_id}"}) for c in e.calls]})
            elif isinstance(e, ToolResult):
                e = e.model_copy(update={"call_id": f"{k}-{e.call_id}"})
            events.append(e)
    return events, known


@pytest.fixture(scope="module")
def retail():
    engine = Engine(FlowRuntime(fixture_flow("tau2/retail")), EngineConfig(per_session=10 ** 6))
    return engine, load_fixture_episodes("tau2/retail", split="test")


@published_data
def test_a_served_session_makes_the_lookups_the_full_state_makes(retail):
    engine, sessions = retail
    made = 0
    for s in sessions:
        known = recorded(s)
        served = serve(engine, s.events, known, True)[1]
        assert served == serve(engine, s.events, known, False)[1]
        made += len(served)
    assert made > 0


@published_data
def test_a_long_served_session_keeps_each_tools_newest_results_and_the_last_steps(retail):
    engine, sessions = retail
    events, known = one_after_another(sessions, 12)
    es, served = serve(engine, events, known, True)
    full, made = serve(engine, events, known, False)
    assert served == made and served
    state = es.state
    assert state.results == [] and len(full.state.results) > 3 * state.look_back
    assert max(len(w) for w in state.ok_results.values()) == state.look_back
    assert max(len(w) for w in full.state.ok_results.values()) > state.look_back
    assert len(es.history) <= 2 * KEPT_HISTORY < len(full.history)
    assert all(position in {e.position for w in state.ok_results.values() for e in w}
               for tag in state.views if isinstance(tag, tuple) and tag[0] == "p" for position in tag[2:])


def test_a_focused_index_holds_what_the_full_index_holds_at_the_focus_paths():
    text = ('{"user_id": "mia_1", "orders": ["#W123", "#W456"], "address": {"zip": "80202"}, '
            '"items": [{"name": "Blue Lamp", "item_id": "1001"}, {"name": "Red Chair", "item_id": "1002"}]}')
    focus = Focus.of_sources([("t", "$.items[*].item_id"), ("t", "$.user_id")]).of("t")
    full, focused = index_result(text), index_focused(text, None, focus)
    assert set(focused.by_path) == {"$.items[*].item_id", "$.items[*].name", "$.user_id"}  # no field names: none read
    for path in focused.by_path:
        assert list(focused.by_path[path]) == full.by_path[path] and list(focused.keys[path]) == full.keys[path]
        assert list(focused.records[path]) == full.records[path]
    assert set(focused.keyish) == {"mia_1", "80202", "#w123", "#w456", "1001", "1002"}
    assert all(holds_key(focused, k) for k in focused.keyish) and not holds_key(focused, "#w789")
    many = index_focused(json.dumps({"ids": [f"#w{i:04d}" for i in range(100)]}), None, None)
    assert isinstance(many.keyish, frozenset) and holds_key(many, "#w0099") and not holds_key(many, "#w0100")
    assert index_focused(text, None, None).by_path == {}


def naive_latest(messages: list[str], base: int, word: str, whole: bool):
    for j in range(len(messages) - 1, -1, -1):
        pos = find_word(messages[j], word) if whole else messages[j].find(word)
        if pos >= 0:
            return base + j, pos
    return None


@pytest.mark.parametrize("limit", [None, 600])
def test_the_users_text_answers_as_a_scan_of_every_message_kept(limit):
    rng = random.Random(7)
    words = ["order", "#w1234", "laptop", "blue", "x\ny", "zip 80202", "ünïcode", "mia"]
    text, said = UserText(limit), []
    for _ in range(400):
        message = " ".join(rng.choice(words) + str(rng.randint(0, 40)) for _ in range(rng.randint(1, 9)))
        text.add(message)
        said.append(message)
        kept = said[text.dropped:]
        assert text.messages == kept and text.count == len(said)
        for probe in words + ["lap", "absent value", "er #w", "blue\nx", "mia7", "1 b"]:
            assert text.contains(probe) == any(probe in m for m in kept)
            assert text.in_text(probe) == (probe in "\n".join(kept))
            for whole in (True, False):
                assert text.latest(probe, whole) == naive_latest(kept, text.dropped, probe, whole)
    assert (text.dropped > 0) == (limit is not None)


@pytest.mark.parametrize("limit", [None, 120])
def test_the_latest_place_of_a_word_is_found_as_a_scan_of_each_message_finds_it(limit):
    """Messages of a tiny alphabet, line breaks inside them: words straddle two messages or sit
    inside longer words often, and the backward search of the whole text must skip those."""
    rng = random.Random(11)
    text, said, straddled = UserText(limit, filter_from=64), [], 0
    for _ in range(300):
        message = "".join(rng.choice("ab a\n") for _ in range(rng.randint(1, 12)))
        text.add(message)
        said.append(message)
        kept = said[text.dropped:]
        for probe in ("a", "ab", "ba", "a b", "b\na", "aa", "\n", "b a\nb"):
            straddled += probe in "\n".join(kept) and not any(probe in m for m in kept)
            for whole in (True, False):
                assert text.latest(probe, whole) == naive_latest(kept, text.dropped, probe, whole)
    assert straddled > 50  # the case the search must tell apart was met


@pytest.mark.parametrize("limit", [None, 600])
def test_a_value_asked_again_is_answered_as_a_scan_of_every_message_kept_finds_it(limit, monkeypatch):
    """Once the text is long, `contains` remembers where it found a value (or up to which message
    it did not); asked again, after more messages or after the message holding it was dropped, it
    answers as a scan of the messages kept does."""
    monkeypatch.setattr(user_text, "FOUND_FROM", 64)
    rng = random.Random(5)
    words = ["order", "#w1234", "laptop", "blue", "zip 80202", "ünïcode", "mia"]
    text, said, remembered, dropped_since = UserText(limit), [], 0, 0
    for _ in range(300):
        message = " ".join(rng.choice(words) + str(rng.randint(0, 40)) for _ in range(rng.randint(1, 9)))
        text.add(message)
        said.append(message)
        kept = said[text.dropped:]
        for probe in words + ["lap", "absent value", "er #w", "mia7", "1 b", "order33"]:
            got = (text._found or {}).get(probe)
            remembered += got is not None
            dropped_since += got is not None and 0 <= got[1] < text.dropped
            assert text.contains(probe) == any(probe in m for m in kept)
    assert remembered > 1000 and (dropped_since > 0) == (limit is not None)


def test_a_served_state_keeps_a_bounded_memory_of_the_results_of_calls_passing_a_value():
    """Each call passing a value remembers its result's key-like values (`described_read`), but a
    served state keeps at most `SERVED_CALL_RESULTS` calls, each with at most `CALL_RESULT_KEYS`."""
    manifest = ToolManifest(tools={"get_order": ToolSpec(kind=ToolKind.read)})
    served, full = ToolState(manifest, served=True), ToolState(manifest)
    listing = json.dumps({"ids": [f"#w{i:05d}" for i in range(3 * CALL_RESULT_KEYS)]})
    for n in range(2 * SERVED_CALL_RESULTS):
        for state in (served, full):
            state.observe_call(f"c{n}", "get_order", {"order_id": f"#o{n:05d}"})
            state.observe_result(f"c{n}", "get_order", listing, None, False)
    assert len(full.result_for) == 2 * SERVED_CALL_RESULTS and len(served.result_for) == SERVED_CALL_RESULTS
    assert ("get_order", "order_id", f"#o{2 * SERVED_CALL_RESULTS - 1:05d}") in served.result_for  # the newest kept
    assert ("get_order", "order_id", "#o00000") not in served.result_for
    kept = {len(entry.index.keyish) for entry in served.result_for.values()}
    assert kept == {CALL_RESULT_KEYS} and len(full.result_for[("get_order", "order_id", "#o00000")].index.first_path) > kept.pop()


def test_a_call_points_to_its_result_while_in_its_window_and_to_its_key_like_values_once_it_left():
    manifest = ToolManifest(tools={"get_order": ToolSpec(kind=ToolKind.read)})
    state = ToolState(manifest, served=True, look_back=2, focus=Focus.of_sources([("get_order", "$.item_id")]))

    def order(n: int, error: bool = False):
        state.observe_call(f"c{n}", "get_order", {"order_id": f"#o{n}"})
        content = "no such order" if error else json.dumps({"item_id": f"i{n:04d}", "user": f"u{n:04d}"})
        state.observe_result(f"c{n}", "get_order", content, None, error)
        return state.result_for[("get_order", "order_id", f"#o{n}")]

    first = order(0)
    assert first is state.ok_results["get_order"][0]  # the result itself: no copy while it is in the window
    order(1)
    order(2)  # the window slides past the first result
    husk = state.result_for[("get_order", "order_id", "#o0")]
    assert husk is not first and husk.ok and set(husk.index.keyish) == set(first.index.keyish) == {"i0000", "u0000"}
    assert not order(3, error=True).ok
