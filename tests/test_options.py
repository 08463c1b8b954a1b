"""Serving options are checked once, in the core: every adapter and the proxy refuse the same bad
value with the same one-line message naming the option (issue 26, item 9)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import pytest

from shop_sessions import shop_flow
from stretto_core import Stretto
from stretto_core.errors import OptionError, StrettoError
from stretto_core.serve.engine import EngineConfig
from stretto_core.serve.options import StrettoOptions

BAD_VALUES: list[tuple[str, Any]] = [
    ("reads", "get_order"),
    ("writes", "cancel_order"),
    ("deny", "cancel_order"),
    ("allow", "get_order"),
    ("reads", [3]),
    ("reads", ["get_order", ""]),
    ("reads", b"get_order"),
    ("reads", {"get_order": True}),
    ("reads", 7),
    ("theta", math.nan),
    ("theta", 5),
    ("theta", -0.1),
    ("theta", "x"),
    ("theta", "0.5"),
    ("theta", True),
    ("theta", math.inf),
    ("per_call", -1),
    ("per_call", 1.5),
    ("per_call", True),
    ("per_session", "40"),
    ("lookup_timeout", 0),
    ("lookup_timeout", math.nan),
    ("call_budget", math.inf),
    ("call_budget", -2.0),
    ("policy", "sometimes"),
    ("shadow", "yes"),
    ("store", 3),
    ("agent_model", ""),
    ("app", 42),
]


def _message(build: Callable[[], Any]) -> str:
    with pytest.raises(OptionError) as caught:
        build()
    return str(caught.value)


@pytest.mark.parametrize(("name", "value"), BAD_VALUES, ids=[f"{n}={v!r}" for n, v in BAD_VALUES])
def test_a_bad_value_is_refused_in_one_line_naming_the_option(name: str, value: Any) -> None:
    message = _message(lambda: StrettoOptions(**{name: value}))
    assert name in message and "\n" not in message and len(message) < 200


@pytest.mark.parametrize(("name", "value"), BAD_VALUES, ids=[f"{n}={v!r}" for n, v in BAD_VALUES])
def test_stretto_refuses_what_the_options_refuse_with_the_same_words(name: str, value: Any) -> None:
    given = {"store": False, name: value}
    assert _message(lambda: Stretto(shop_flow(), **given)) == \
        _message(lambda: StrettoOptions(**{name: value}))


def test_one_string_for_a_list_of_tools_says_how_to_write_it() -> None:
    assert _message(lambda: Stretto(reads="get_order", store=False)) == \
        "reads must be a list of tool names, not one string: write reads=['get_order']"


def test_an_option_error_is_a_value_error_and_a_stretto_error() -> None:
    with pytest.raises(ValueError):
        StrettoOptions(theta=2.0)
    with pytest.raises(StrettoError):
        StrettoOptions(theta=2.0)


def test_an_unknown_option_is_named() -> None:
    assert "thetta" in _message(lambda: StrettoOptions(thetta=0.5))


def test_good_values_are_kept_and_tool_names_come_back_as_a_tuple_in_order() -> None:
    options = StrettoOptions(reads=["b", "a", "b"], allow={"a"}, theta=1, per_call=0, lookup_timeout=2,
                             store=Path("x"))
    assert options.reads == ("b", "a")
    assert options.allow == ("a",)
    assert options.theta == 1.0 and isinstance(options.theta, float)
    assert options.per_call == 0
    assert options.store == Path("x")


def test_tool_names_may_come_from_any_iterable_even_a_generator() -> None:
    assert StrettoOptions(reads=(name for name in ["get_order", "get_user"])).reads == ("get_order", "get_user")


def test_stretto_serves_with_the_options_it_checked() -> None:
    stretto = Stretto(shop_flow(), reads=["get_order"], allow=["get_order", "get_user"], deny=["get_user"],
                      theta=0.5, per_call=2, store=False)
    assert stretto.options.theta == 0.5
    assert stretto.engine is not None
    assert stretto.engine.config.theta == 0.5 and stretto.engine.config.per_call == 2
    assert stretto.engine.config.allow == frozenset({"get_order"})
    assert stretto.authority.reads() == ["get_order"]


def test_a_stretto_built_from_options_is_the_same_as_one_built_from_keywords() -> None:
    options = StrettoOptions(flow=shop_flow(), reads=["get_order"], theta=0.4, store=False)
    a, b = Stretto.from_options(options), Stretto(shop_flow(), reads=["get_order"], theta=0.4, store=False)
    assert a.options == b.options.model_copy(update={"flow": a.options.flow})
    assert a.engine is not None and b.engine is not None and a.engine.config == b.engine.config


def test_options_cannot_be_changed_after_they_were_checked() -> None:
    options = StrettoOptions()
    with pytest.raises(Exception):
        options.theta = 5  # type: ignore[misc]
    assert options.theta == StrettoOptions().theta


def test_every_option_has_a_type_and_a_description_a_docs_page_can_show() -> None:
    for name, field in StrettoOptions.model_fields.items():
        assert field.annotation is not None, name
        assert field.description and len(field.description) > 20, name


@pytest.mark.parametrize("config", [dict(theta=math.nan), dict(theta=1.5), dict(theta="x"), dict(per_call=-1),
                                    dict(per_session=True), dict(policy="x"), dict(allow="get_order")])
def test_the_engines_config_refuses_what_the_options_refuse(config: dict[str, Any]) -> None:
    with pytest.raises(OptionError, match=next(iter(config))):
        EngineConfig(**config)


def test_the_engines_config_keeps_good_values() -> None:
    config = EngineConfig(theta=0, per_session=10 ** 9, allow=frozenset({"a"}))
    assert (config.theta, config.per_session, config.allow) == (0.0, 10 ** 9, frozenset({"a"}))
