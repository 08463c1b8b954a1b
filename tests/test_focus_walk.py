"""A served result's index is the same whether its out-of-focus part is walked bare or with paths."""

from __future__ import annotations

import json

import pytest

from stretto_core.sessions import focus as focus_module
from stretto_core.sessions.focus import Focus, index_focused
from stretto_core.sessions.focus_walk import split_leaves
from stretto_core.sessions.values import MAX_LEAVES, TextResult, leaves_addressed

USER = {
    "user_id": "mia_li_3668",
    "name": {"first_name": "Mia", "last_name": "Li"},
    "address": {"zip": "76192", "city": "Fort Worth", "unit": None, "verified": True},
    "payment_methods": {"gift_card_7471275": {"balance": 17.5, "id": "gift_card_7471275"}},
    "orders": [{"order_id": "#W5918442", "items": [{"item_id": "8591113813", "price": 51.0}]},
               {"order_id": "#W7259788", "items": [{"item_id": "1234567", "price": 12}]}],
    "history": [[1, "ab12"], [True, 3.25], []],
    7: "seven",
}

FOCUSES = [
    Focus.of_sources([("t", "$.orders[*].order_id")]),
    Focus.of_sources([("t", "$.address.zip")]),
    Focus.of_sources([("t", "$.payment_methods.*~")]),
    Focus.of_sources([("t", "$.history[*][*]"), ("t", "$.user_id")]),
    Focus.of_sources([("t", "$")]),
    None,
]


def _picture(index) -> tuple:
    """Everything a decision reads of a focused index (its key-like values as a set: their order
    is the set's own and nothing reads it)."""
    return (index.by_path, {p: list(v) for p, v in index.records.items()}, index.keys, index.all_keys,
            set(index.keyish), type(index.keyish))


def _walked_whole(monkeypatch: pytest.MonkeyPatch, text: str, parsed, focus) -> tuple:
    """The index as made from `leaves_addressed` alone (the split walk switched off)."""
    with monkeypatch.context() as patch:
        patch.setattr(focus_module, "split_leaves", lambda structure, may_hold, covers=None: None)
        return _picture(index_focused(text, parsed, focus))


@pytest.mark.parametrize("at", range(len(FOCUSES)))
def test_a_focused_index_is_the_same_as_one_walked_with_every_path(monkeypatch: pytest.MonkeyPatch, at: int) -> None:
    focus = FOCUSES[at]
    tool_focus = focus.of("t") if focus is not None else None
    text = json.dumps(USER)
    assert _picture(index_focused(text, USER, tool_focus)) == _walked_whole(monkeypatch, text, USER, tool_focus)


def test_the_split_walk_gives_the_leaves_in_focus_as_the_full_walk_does() -> None:
    tool_focus = Focus.of_sources([("t", "$.orders[*].order_id")]).of("t")
    placed, loose = split_leaves(USER, tool_focus.may_hold)
    every = leaves_addressed(USER)
    # the orders' field names are read by no source: walked bare, as the values out of focus are
    assert placed == [leaf for leaf in every if leaf[0].startswith("$.orders[*]") and not leaf[0].endswith("*~")]
    assert len(placed) + len(loose) == len(every)
    assert "mia_li_3668" in loose and "gift_card_7471275" in loose and "order_id" in loose


def test_a_records_field_names_are_placed_where_a_source_reads_them() -> None:
    tool_focus = Focus.of_sources([("t", "$.orders[*].order_id"), ("t", "$.orders[*].*~")]).of("t")
    placed, _ = split_leaves(USER, tool_focus.may_hold)
    every = leaves_addressed(USER)
    assert placed == [leaf for leaf in every if leaf[0].startswith("$.orders[*]")
                      and (leaf[0] == "$.orders[*].*~" or not leaf[0].endswith("*~"))]
    assert any(leaf[0] == "$.orders[*].*~" for leaf in placed)
    assert not any(leaf[0] == "$.orders[*].items[*].*~" for leaf in placed)  # the items' names: read by none


def test_a_result_near_the_leaf_bound_is_left_to_the_full_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    big = {"rows": [{"id": f"row{i:05d}", "n": i} for i in range(MAX_LEAVES)]}
    tool_focus = Focus.of_sources([("t", "$.rows[*].id")]).of("t")
    assert split_leaves(big, tool_focus.may_hold) is None
    text = json.dumps(big)
    assert _picture(index_focused(text, big, tool_focus)) == _walked_whole(monkeypatch, text, big, tool_focus)


def test_text_read_as_lines_is_left_to_the_full_walk() -> None:
    assert split_leaves(TextResult("Hotels: A\nB\nC"), lambda path: False) is None


def test_may_hold_says_no_only_where_no_focus_path_lies_under() -> None:
    tool_focus = Focus.of_sources([("t", "$.orders[*].order_id"), ("t", "$.address.zip")]).of("t")
    assert tool_focus.may_hold("$")
    assert tool_focus.may_hold("$.address")
    assert tool_focus.may_hold("$.orders[*].items[*]")
    assert not tool_focus.may_hold("$.name")
    assert not tool_focus.may_hold("$.address.city")


def test_a_walk_told_which_paths_lie_under_a_prefix_gives_the_same_leaves_as_one_asking_at_each_path() -> None:
    tricky = {"flights": [[{"id": "HAT001", "prices": {"economy": 120, "*~": "odd", "x*~": 1},
                            "seats": [1, 2, {"row": "12A"}]}], {"id": "HAT002", "meta": None}],
              "user": {"name": "mia", "flights": ["HAT003"]}}
    for sources in ([("t", "$.flights[*][*].id")], [("t", "$.flights[*].id"), ("t", "$.flights[*].prices.*~")],
                    [("t", "$.user.flights[*]")], [("t", "$")]):
        tool_focus = Focus.of_sources(sources).of("t")
        told = split_leaves(tricky, tool_focus.may_hold, tool_focus.covers)
        assert told is not None
        assert told == split_leaves(tricky, tool_focus.may_hold)
