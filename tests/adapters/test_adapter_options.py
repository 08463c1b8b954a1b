"""Every adapter and the proxy check their serving options through the core's one model: the same
bad value is refused everywhere, with the same one-line message (issue 26, item 9)."""

from __future__ import annotations

import math
from typing import Any, Callable

import pytest

from shop_sessions import shop_flow
from stretto_core.errors import OptionError
from stretto_core.serve.options import StrettoOptions


def _openai(**options: Any) -> Any:
    pytest.importorskip("agents")
    from agents import Agent
    from stretto_openai_agents import instrument

    return instrument(Agent(name="a"), shop_flow(), store=False, **options)


def _adk(**options: Any) -> Any:
    pytest.importorskip("google.adk")
    from stretto_adk import StrettoPlugin

    return StrettoPlugin(shop_flow(), store=False, **options)


def _langgraph(**options: Any) -> Any:
    pytest.importorskip("langchain")
    from stretto_langgraph import StrettoMiddleware

    return StrettoMiddleware(shop_flow(), store=False, **options)


def _langgraph_tool_node(**options: Any) -> Any:
    pytest.importorskip("langgraph")
    from stretto_langgraph import StrettoToolWrapper

    return StrettoToolWrapper(shop_flow(), store=False, **options)


def _claude(**options: Any) -> Any:
    pytest.importorskip("claude_agent_sdk")
    from stretto_claude import claude_hooks

    return claude_hooks(shop_flow(), store=False, **options)


def _fastmcp(**options: Any) -> Any:
    pytest.importorskip("fastmcp")
    from stretto_mcp import StrettoFastMCPMiddleware

    return StrettoFastMCPMiddleware(shop_flow(), store=False, **options)


def _proxy(**options: Any) -> Any:
    pytest.importorskip("mcp")
    from stretto_mcp.run import ProxyConfig

    return ProxyConfig.checked(command=["server"], **options)


ADAPTERS: dict[str, Callable[..., Any]] = {
    "openai-agents": _openai, "adk": _adk, "langgraph middleware": _langgraph,
    "langgraph tool node": _langgraph_tool_node, "claude": _claude, "fastmcp": _fastmcp, "proxy": _proxy,
}

BAD = [("reads", "get_order"), ("deny", "cancel_order"), ("allow", "get_order"), ("theta", math.nan),
       ("theta", 5), ("theta", "x"), ("per_call", -1), ("per_session", 2.5), ("lookup_timeout", 0),
       ("call_budget", math.nan)]


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
@pytest.mark.parametrize(("name", "value"), BAD, ids=[f"{n}={v!r}" for n, v in BAD])
def test_every_adapter_refuses_a_bad_option_with_the_cores_message(adapter: str, name: str, value: Any) -> None:
    with pytest.raises(OptionError) as core:
        StrettoOptions(**{name: value})
    with pytest.raises(OptionError) as caught:
        ADAPTERS[adapter](**{name: value})
    assert str(caught.value) == str(core.value)


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_every_adapter_takes_good_options(adapter: str) -> None:
    assert ADAPTERS[adapter](reads=["get_order"], deny=["cancel_order"], theta=0.5, per_call=2) is not None
