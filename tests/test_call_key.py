"""A call's key is the JSON of its arguments, however it is written (the quick way or the encoder)."""

from __future__ import annotations

import json

import pytest

from stretto_core.sessions.call_keys import flat_json as _flat_json
from stretto_core.sessions.state import call_key

ARGUMENTS = [
    {},
    {"order_id": "#W5918442"},
    {"b": "ü\"\\\n\x00é😀", "a": -12},
    {"user_id": "mia_li_3668", "zip": 76192, "name": "Mia Li"},
    {"flag": True},
    {"price": 1.5},
    {"nothing": None},
    {7: "seven"},
    {"items": ["1", "2"]},
]


@pytest.mark.parametrize("arguments", ARGUMENTS)
def test_a_call_key_is_the_tool_and_its_arguments_sorted_json(arguments: dict) -> None:
    written = json.dumps(arguments, sort_keys=True, default=str, separators=(",", ":"))
    assert call_key("get_order_details", arguments) == "get_order_details " + written


def test_only_text_and_whole_numbers_take_the_quick_way() -> None:
    assert _flat_json({"a": "x", "b": 3}) == '{"a":"x","b":3}'
    assert _flat_json({"a": True}) is None
    assert _flat_json({"a": 1.5}) is None
    assert _flat_json({1: "x"}) is None
    assert _flat_json({1: "x", "a": "y"}) is None


def test_a_served_session_keys_a_call_of_text_and_whole_numbers_without_writing_json(monkeypatch) -> None:
    import stretto_core.serve.live as live

    monkeypatch.setattr(live.json, "dumps", lambda *a, **k: (_ for _ in ()).throw(AssertionError("JSON written")))
    assert live._call_key("get_order", {"order_id": "O1", "n": 2}) == live._call_key("get_order", {"n": 2, "order_id": "O1"})


@pytest.mark.parametrize("one, other", [({"a": "1"}, {"a": 1}), ({"a": 1}, {"a": True}), ({"a": 1}, {"a": 1.0}),
                                        ({"a": "x"}, {"a": "x", "b": "y"}), ({"a": "x"}, {"b": "x"}),
                                        ({"a": ["x"]}, {"a": "x"})])
def test_a_served_sessions_keys_of_different_arguments_never_match(one: dict, other: dict) -> None:
    from stretto_core.serve.live import _call_key

    assert _call_key("t", one) != _call_key("t", other)
    assert _call_key("t", one) == _call_key("t", dict(one)) and _call_key("t", one) != _call_key("u", one)
