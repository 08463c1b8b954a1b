"""A distinguishing word of a record's multi-word name names that record ("the helmet" for
`Cycling Helmet`), and only it; a word every record shares names none; served and learned alike."""

from __future__ import annotations

from collections import Counter

import pytest

from real_corpora import corpus_sessions
from shared_data import full_data

from stretto_core.learn.bindings.mention import mention_flags, named_view
from stretto_core.learn.bindings.pick import pool_of
from stretto_core.learn.bindings.tokens import value_tokens
from stretto_core.sessions.focus import Focus
from stretto_core.sessions.model import ToolResult
from stretto_core.sessions.state import ToolState
from stretto_core.sessions.value_written import find_word
from bindings_sessions import SHOP, Script, observe_event

ITEMS = "$.items[*]"
PRODUCT = "$.items[*].product_id"


def test_a_names_words_are_its_tokens_and_common_or_short_words_are_not() -> None:
    assert value_tokens("cycling helmet") == ["cycling", "helmet"]
    assert value_tokens("indoor security camera") == ["indoor", "security", "camera"]
    assert value_tokens("t-shirt") == ["shirt"]
    assert value_tokens("helmet") == []  # one word: a whole value, a record word already
    assert value_tokens("luggage set") == ["luggage"]  # "set" is too short to tell records apart
    assert value_tokens("with the edition") == []  # common words say nothing
    assert value_tokens("please call me back when the order arrives at the door") == []  # a text, not a name


def test_one_word_of_an_items_name_names_that_item_and_not_its_siblings() -> None:
    items = [("Cycling Helmet", "4001"), ("Digital Camera", "4002"), ("Garden Hose", "4003")]
    live = Script().user("the helmet is too small, I want a medium")
    live.call("get_order_details", {"order_id": "#A1"},
              {"order_id": "#A1", "items": [{"name": n, "product_id": p} for n, p in items]})
    state = live.state(SHOP)
    assert mention_flags(state, pool_of(state, "get_order_details")[0], PRODUCT) == [True, False, False]


def test_a_word_every_items_name_shares_names_none_of_them() -> None:
    items = [("Smart Watch", "5001"), ("Smart Thermostat", "5002")]
    live = Script().user("the smart one stopped working")
    live.call("get_order_details", {"order_id": "#A1"},
              {"order_id": "#A1", "items": [{"name": n, "product_id": p} for n, p in items]})
    state = live.state(SHOP)
    assert mention_flags(state, pool_of(state, "get_order_details")[0], PRODUCT) == [False, False]
    live.user("I mean the watch")
    state = live.state(SHOP)
    assert mention_flags(state, pool_of(state, "get_order_details")[0], PRODUCT) == [True, False]


@pytest.fixture(scope="module")
def retail(tmp_path_factory: pytest.TempPathFactory):
    return corpus_sessions("retail", tmp_path_factory.mktemp("retail"), most=150)


def _token_only(state: ToolState, entry) -> list[str] | None:
    """The product id of the one item of an order of several whose name the user wrote only by a
    token (no value of any item written whole, not the id): else None."""
    records = entry.index.records.get("$.items[*].name")
    if not records or len(records) < 2:
        return None
    text = state.user.text
    held = Counter(t for _, name in records for t in set(value_tokens(name.casefold())))
    named = []
    for address, name in records:
        key = name.casefold()
        if key in text:
            return None  # named whole: a record word already
        if any(held[t] == 1 and find_word(text, t) >= 0 for t in value_tokens(key)):
            named.append(address)
    if len(named) != 1:
        return None
    for path, pairs in entry.index.records.items():  # no item named by a whole value (an option: "black")
        if path.startswith(ITEMS):
            for _, value in pairs:
                if isinstance(value, str) and len(value) >= 4 and find_word(text, value.casefold()) >= 0:
                    return None
    ids = dict(entry.index.records.get(PRODUCT, ()))
    return [ids[named[0]]] if named[0] in ids and ids[named[0]].casefold() not in text else None


@full_data  # counts the cases it exercised: the sample holds too few
def test_on_real_retail_sessions_a_token_names_the_described_item_alone_and_served_states_agree(retail) -> None:
    seen: Counter[str] = Counter()
    focus = Focus.of_sources([("get_order_details", PRODUCT)])
    for session in retail:
        manifest = session.header.manifest
        learned = ToolState(manifest)
        served = ToolState(manifest, served=True, focus=focus)
        for event in session.events:
            observe_event(learned, event)
            observe_event(served, event)
            if not (isinstance(event, ToolResult) and event.tool == "get_order_details" and not event.error):
                continue
            entry, twin = pool_of(learned, "get_order_details")[0], pool_of(served, "get_order_details")[0]
            view, twin_view = named_view(learned, entry, PRODUCT), named_view(served, twin, PRODUCT)
            assert (view and view.keys) == (twin_view and twin_view.keys), session.header.session_id
            seen["orders"] += 1
            expected = _token_only(learned, entry)
            if expected is not None:
                seen["named by a token alone"] += 1
                assert view is not None and set(view.keys) == set(expected), (session.header.session_id, view)
    assert seen["orders"] > 50 and seen["named by a token alone"] >= 3, seen


def test_a_token_another_record_holds_in_any_of_its_own_fields_tells_neither_apart() -> None:
    files = [{"id_": "11", "filename": "team-building-activities.docx", "owner": "emma.johnson@corp.com"},
             {"id_": "12", "filename": "budget 2024.xlsx", "owner": "team.lead@corp.com"}]
    live = Script().user("open the team document")
    live.call("get_order_details", {"order_id": "#A1"}, {"order_id": "#A1", "items": files})
    state = live.state(SHOP)
    # "team" is a token of the first file's name, and a word of the second file's owner
    assert mention_flags(state, pool_of(state, "get_order_details")[0], "$.items[*].id_") == [False, False]
    live.user("the activities one")  # the first file's alone
    state = live.state(SHOP)
    assert mention_flags(state, pool_of(state, "get_order_details")[0], "$.items[*].id_") == [True, False]
