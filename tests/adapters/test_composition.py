"""stretto composes with what a user already has: Claude hooks append to the user's own per
event, every adapter spells "record nothing" `store=False`, and each adapter's package exports
its public names (issue 28, item 5)."""

from __future__ import annotations

import importlib
import inspect
import warnings
from typing import Any

import pytest

from shop_sessions import shop_flow
from stretto_core.serve.options import ServeOptions, StrettoOptions

ADAPTER_PACKAGES = ["stretto_adk", "stretto_claude", "stretto_langgraph", "stretto_mcp", "stretto_openai_agents"]


def test_claude_hooks_into_options_append_after_the_users_own_hooks_per_event() -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    from stretto_claude import claude_hooks

    async def mine(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
        return {}

    users = sdk.HookMatcher(hooks=[mine])
    servers = {"shop": {"type": "sdk", "name": "shop", "instance": object()}}
    options = sdk.ClaudeAgentOptions(hooks={"PostToolUse": [users]}, mcp_servers=servers)
    hooks = claude_hooks(shop_flow(), store=False, into=options)
    assert options.hooks is not None
    assert options.hooks["PostToolUse"] == [users, *hooks["PostToolUse"]]  # theirs first, then ours
    assert set(options.hooks) == set(hooks)  # every event stretto hooks, the user's kept
    assert hooks.servers.names == ["shop"]  # the tools are the options' own servers


def test_claude_hooks_into_a_hooks_dict_extend_its_lists_in_place() -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    from stretto_claude import claude_hooks, merged_hooks

    theirs_matcher = sdk.HookMatcher(hooks=[])
    theirs = {"PostToolUse": [theirs_matcher], "PreToolUse": [theirs_matcher]}
    listed = theirs["PostToolUse"]
    hooks = claude_hooks(shop_flow(), store=False, into=theirs)
    assert theirs["PostToolUse"] is listed and listed[0] is theirs_matcher and len(listed) == 2
    assert theirs["PreToolUse"] == [theirs_matcher]
    plain = {**{"PostToolUse": [theirs_matcher]}, **hooks}  # what a dict merge would do: one side lost
    assert theirs_matcher not in plain["PostToolUse"]
    assert merged_hooks({"PostToolUse": [theirs_matcher]}, hooks)["PostToolUse"][0] is theirs_matcher
    with pytest.raises(TypeError, match="into= takes a ClaudeAgentOptions or a hooks dict"):
        claude_hooks(shop_flow(), store=False, into=3)


def test_the_fastmcp_middleware_says_store_false_like_every_adapter_and_record_false_still_works() -> None:
    pytest.importorskip("fastmcp")
    from stretto_mcp import StrettoFastMCPMiddleware
    from stretto_mcp.fastmcp_middleware import StrettoMiddleware

    assert StrettoMiddleware is StrettoFastMCPMiddleware
    assert StrettoFastMCPMiddleware(shop_flow(), store=False).stretto.store is None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = StrettoFastMCPMiddleware(shop_flow(), record=False)
    assert old.stretto.store is None and any(w.category is DeprecationWarning for w in caught)


def test_the_typed_options_are_the_cores_fields_but_the_flow_and_the_harness() -> None:
    assert set(ServeOptions.__annotations__) | {"flow", "harness"} == set(StrettoOptions.model_fields)


def _keywords(function: Any) -> set[str]:
    """The option names a constructor takes: its own keywords and its typed `**options`' keys."""
    names: set[str] = set()
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            annotation = str(parameter.annotation)
            typed = annotation.removeprefix("Unpack[").removesuffix("]")
            assert typed != annotation, f"{function.__qualname__}: **{name} is not typed"
            found = vars(importlib.import_module(function.__module__))[typed]
            names |= set(found.__annotations__)
        elif name not in ("self", "agent"):
            names.add(name)
    return names


@pytest.mark.parametrize("entry", ["stretto_adk:StrettoPlugin", "stretto_claude:claude_hooks",
                                   "stretto_langgraph:StrettoMiddleware", "stretto_langgraph:StrettoToolWrapper",
                                   "stretto_mcp:StrettoFastMCPMiddleware", "stretto_openai_agents:instrument"])
def test_every_adapter_types_its_options_and_spells_the_shared_ones_as_the_core_does(entry: str) -> None:
    package, name = entry.split(":")
    pytest.importorskip({"stretto_adk": "google.adk", "stretto_claude": "claude_agent_sdk",
                         "stretto_langgraph": "langchain", "stretto_mcp": "fastmcp",
                         "stretto_openai_agents": "agents"}[package])
    target = getattr(importlib.import_module(package), name)
    names = _keywords(target.__init__ if inspect.isclass(target) else target)
    shared = {"store", "theta", "per_call", "per_session", "lookup_timeout", "call_budget", "allow", "deny",
              "shadow", "policy", "reads", "app"}
    assert shared <= names
    assert "record" not in names or name == "StrettoFastMCPMiddleware"  # the old spelling, deprecated


@pytest.mark.parametrize("package", ADAPTER_PACKAGES)
def test_each_adapter_package_exports_what_its_all_names(package: str) -> None:
    module = importlib.import_module(package)
    sdk = {"stretto_adk": "google.adk", "stretto_claude": "claude_agent_sdk", "stretto_langgraph": "langchain",
           "stretto_mcp": "fastmcp", "stretto_openai_agents": "agents"}[package]
    pytest.importorskip(sdk)
    assert [name for name in module.__all__ if getattr(module, name, None) is None] == []
