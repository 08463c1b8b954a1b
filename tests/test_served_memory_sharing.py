"""A served session shares what never changes and makes its own tables only when it fills them."""

from __future__ import annotations

import json

from stretto_core.sessions import shared_tuples
from stretto_core.sessions.focus import Focus, index_focused
from stretto_core.sessions.manifest import ToolKind, ToolManifest, ToolSpec
from stretto_core.sessions.state import ToolState


def listing(names: list[str]) -> str:
    return json.dumps({"items": [{"name": n, "item_id": f"{1000 + i}"} for i, n in enumerate(names)]})


FOCUS = Focus.of_sources([("t", "$.items[*].item_id")]).of("t")


def test_two_results_of_one_shape_share_their_paths_and_addresses_but_keep_their_own_values():
    a = index_focused(listing(["Blue Lamp", "Red Chair"]), None, FOCUS)
    b = index_focused(listing(["Green Desk", "Tall Shelf"]), None, FOCUS)
    path_a = next(p for p in a.records if p.endswith("item_id"))
    path_b = next(p for p in b.records if p.endswith("item_id"))
    assert path_a is path_b, "each result kept its own copy of the path"
    assert a.records[path_a].addresses is b.records[path_b].addresses, "each result kept its own addresses"
    assert list(b.records[path_b]) == [((0,), "1000"), ((1,), "1001")]
    assert list(a.by_path["$.items[*].name"]) == ["Blue Lamp", "Red Chair"]
    assert list(b.by_path["$.items[*].name"]) == ["Green Desk", "Tall Shelf"]


def test_only_short_tuples_are_shared_and_the_table_stays_bounded(monkeypatch):
    monkeypatch.setattr(shared_tuples, "_shared", {})
    monkeypatch.setattr(shared_tuples, "MAX_SHARED", 2)
    first = shared_tuples.shared((1, 2))
    assert shared_tuples.shared(tuple([1, 2])) is first
    long = tuple(range(shared_tuples.MAX_LENGTH + 1))
    assert shared_tuples.shared(long) is long and shared_tuples.shared_count() == 1
    shared_tuples.shared((3,))
    late = tuple([4, 5])
    assert shared_tuples.shared(late) is late and shared_tuples.shared_count() == 2


def test_a_served_states_sets_are_its_own_once_filled_and_never_another_states():
    manifest = ToolManifest(tools={"get_order": ToolSpec(kind=ToolKind.read), "cancel": ToolSpec(kind=ToolKind.write)})
    quiet, busy = ToolState(manifest, served=True), ToolState(manifest, served=True)
    busy.observe_call("c1", "get_order", {"order_id": "#W1234"})
    busy.observe_result("c1", "get_order", '{"status": "pending"}', None, False)
    assert busy.given == {"#w1234"} and len(busy.made) == 1
    assert quiet.given == set() and quiet.made == set() and quiet.words_said == set()
    assert type(quiet.given) is frozenset, "an empty state made a set of its own"
    busy.observe_call("c2", "cancel", {"order_id": "#W1234"})
    assert busy.made == set() and quiet.made == set()


def test_two_served_states_passed_the_same_argument_share_its_key_but_not_its_values():
    manifest = ToolManifest(tools={"get_order": ToolSpec(kind=ToolKind.read)})
    one, two = ToolState(manifest, served=True), ToolState(manifest, served=True)
    one.observe_call("c1", "get_order", {"order_id": "#W1111"})
    two.observe_call("c1", "get_order", {"order_id": "#W2222"})
    key_one, key_two = next(iter(one.passed_by_arg)), next(iter(two.passed_by_arg))
    assert key_one == ("get_order", "order_id") and key_one is key_two, "each state made its own key"
    assert one.passed_values("get_order", "order_id") == ("#w1111",)
    assert two.passed_values("get_order", "order_id") == ("#w2222",)


def test_a_named_view_keeps_one_set_for_the_keys_named_and_the_keys_flagged():
    from stretto_core.learn.bindings.mention import named_view

    manifest = ToolManifest(tools={"get_user": ToolSpec(kind=ToolKind.read)})
    state = ToolState(manifest, served=True, focus=Focus.of_sources([("get_user", "$.orders[*]")]))
    state.observe_user("Please look at order #W1234, not the other one.")
    state.observe_call("c1", "get_user", {"user_id": "mia_1"})
    entry = state.observe_result("c1", "get_user", '{"orders": ["#W1234", "#W9999"]}', None, False)
    view = named_view(state, entry, "$.orders[*]")
    assert view is not None and view.flags == [True, False] and view.keys == {"#w1234"}
    assert view.keys is entry.cache["$.orders[*]"][1], "the view kept a second set of the same keys"


def test_sessions_of_one_listing_share_its_guard_and_a_new_listing_gets_its_own():
    from shop_sessions import MANIFEST, shop_flow
    from stretto_core.serve.engine import Engine
    from stretto_core.serve.runtime import FlowRuntime

    engine = Engine(FlowRuntime(shop_flow()))
    first, second = engine.session(live_manifest=MANIFEST), engine.session(live_manifest=MANIFEST)
    assert first.guard is second.guard, "each session of the same listing made its own guard"
    read = next(iter(MANIFEST.reads()))
    narrower = ToolManifest(tools={name: spec for name, spec in MANIFEST.tools.items() if name != read})
    third = engine.session(live_manifest=narrower)
    assert third.guard is not first.guard
    assert first.guard.permits(read) and not third.guard.permits(read)


def test_a_focused_results_writable_keys_are_made_once_and_kept():
    from stretto_core.learn.bindings.mention import _writable_keys

    manifest = ToolManifest(tools={"get_user": ToolSpec(kind=ToolKind.read)})
    state = ToolState(manifest, served=True, focus=Focus.of_sources([("get_user", "$.orders[*]")]))
    long = state.observe_result("c1", "get_user", '{"orders": ["#W1234", "#W9999"]}', None, False)
    assert _writable_keys(long) == long.index.all_keys == ("#w1234", "#w9999")
    assert _writable_keys(long) is _writable_keys(long), "the writable keys were made twice"
    short = state.observe_result("c2", "get_user", '{"orders": ["#W1234", "ab"]}', None, False)
    assert _writable_keys(short) == ("#w1234",)
