"""A call's key is the JSON of its arguments, however it is written (the quick way or the encoder)."""

from __future__ import annotations

import json

import pytest

from stretto_core.sessions.state import _flat_json, call_key

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
