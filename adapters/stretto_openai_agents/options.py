"""The options of an instrumented agent, typed and checked once, in the SDK's own style.

Shaped like `agents.extensions.ToolOutputTrimmer`: a dataclass whose fields are the knobs, tool
names given as one string or an iterable (kept as a frozenset), and a `ValueError` naming the
field when a value cannot work. Fields left `None` take stretto's own defaults.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents import Agent, RunContextWrapper
    from agents.tool_context import ToolContext
    from stretto_core import Flow, ToolManifest

SessionKey = Callable[["RunContextWrapper[Any]"], "str | None"]
"""Names the conversation a run belongs to; runs with the same name share one stretto session."""

ErrorResults = Callable[["ToolContext[Any]", Any], bool]
"""Says whether a function tool's return value is an error (the SDK has no flag for that)."""


def _names(value: str | Iterable[str] | None, name: str) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return frozenset({value})
    if isinstance(value, (bytes, bytearray)):
        raise ValueError(f"{name} must be a tool name or an iterable of tool names, not bytes")
    names = frozenset(value)
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise ValueError(f"{name} must hold tool names (strings), got {bad[0]!r}")
    return names


@dataclass
class StrettoOptions:
    """How stretto serves one agent.

    Args:
        flow: The flow to serve (a `stretto_core.Flow` or the path of a flow file). `None`
            records sessions and makes no lookup.
        reads: Tools that only read, declared in code. A tool is looked up only when the flow
            marks it read *and* this, a manifest, or the tool's MCP annotations
            (`readOnlyHint`) do; a tool of unknown kind never is.
        writes: Tools that change something (never looked up, whatever else says).
        manifest: A tool manifest (or the path of one) saying which tools are reads.
        store: Folder for recorded sessions (default `.stretto/sessions`); `False` records nothing.
        session_key: Which conversation a run belongs to. `None`: each `Runner.run` is its own
            session. A string: the attribute (or key) of your run context object holding the
            conversation id (`Runner.run(..., context=...)`). A callable: takes the
            `RunContextWrapper` and returns the id, or `None` for a run of its own.
        error_results: Which function-tool results are errors, given the call's `ToolContext`
            and the tool's return value; stretto takes errors in (they never feed lookups'
            arguments, and a lookup that errs is marked failed). Without it, a result is an error
            when the SDK's default formatter produced it from an exception (MCP results carry
            their own `isError`).
        app: The app name written into each session's header.
        agent_model: The model name written into each session's header. Without it, the agent's
            own `model` (a name, or a `Model` object's name), else the SDK's default model: hooks
            cannot see a `RunConfig(model=...)`, so name the model here when you set it there.
        theta, per_call, per_session, lookup_timeout, call_budget, allow, deny, shadow: the
            serving knobs of `stretto_core.Stretto` (threshold, lookups per call and per
            session, seconds per lookup and per call, tool allow- and denylists, shadow mode).
        max_conversations: How many conversations (`session_key`) stay open at once; the least
            recently used one is closed beyond that.
    """

    flow: Flow | str | Path | None = None
    reads: str | Iterable[str] = field(default=())
    writes: str | Iterable[str] = field(default=())
    manifest: ToolManifest | str | Path | None = None
    store: str | Path | bool | None = None
    session_key: str | SessionKey | None = None
    error_results: ErrorResults | None = None
    app: str | None = None
    agent_model: str | None = None
    theta: float | None = None
    per_call: int | None = None
    per_session: int | None = None
    lookup_timeout: float | None = None
    call_budget: float | None = None
    allow: str | Iterable[str] | None = None
    deny: str | Iterable[str] = field(default=())
    shadow: bool = False
    max_conversations: int = 1024

    def __post_init__(self) -> None:
        self.reads = _names(self.reads, "reads") or frozenset()
        self.writes = _names(self.writes, "writes") or frozenset()
        self.deny = _names(self.deny, "deny") or frozenset()
        self.allow = _names(self.allow, "allow")
        if self.theta is not None and not (isinstance(self.theta, (int, float)) and 0.0 <= self.theta <= 1.0):
            raise ValueError(f"theta must be a number in [0, 1], got {self.theta!r}")
        for name in ("per_call", "per_session"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        for name in ("lookup_timeout", "call_budget"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not math.isfinite(value) or value <= 0):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        if self.session_key is not None and not (isinstance(self.session_key, str) or callable(self.session_key)):
            raise ValueError("session_key must be an attribute name, a callable, or None")
        if self.error_results is not None and not callable(self.error_results):
            raise ValueError("error_results must be a callable (tool context, output) -> bool, or None")
        if isinstance(self.max_conversations, bool) or not isinstance(self.max_conversations, int) \
                or self.max_conversations < 1:
            raise ValueError(f"max_conversations must be an integer >= 1, got {self.max_conversations!r}")
        if self.agent_model is not None and (not isinstance(self.agent_model, str) or not self.agent_model.strip()):
            raise ValueError(f"agent_model must be a model's name (a non-empty string), got {self.agent_model!r}")
        if not isinstance(self.store, (str, Path, bool, type(None))):
            raise ValueError(f"store must be a folder, True, False or None, got {self.store!r}")

    def core_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of `stretto_core.Stretto` these options set."""
        kwargs: dict[str, Any] = {"reads": sorted(self.reads), "writes": sorted(self.writes),  # type: ignore[arg-type]
                                  "manifest": self.manifest, "store": self.store, "app": self.app,
                                  "deny": sorted(self.deny), "shadow": self.shadow}  # type: ignore[arg-type]
        if self.allow is not None:
            kwargs["allow"] = sorted(self.allow)  # type: ignore[arg-type]
        for name in ("theta", "per_call", "per_session", "lookup_timeout", "call_budget"):
            if getattr(self, name) is not None:
                kwargs[name] = getattr(self, name)
        return kwargs

    def instrument(self, agent: Agent[Any]) -> Agent[Any]:
        """A copy of `agent` served by stretto with these options (see `instrument`)."""
        from stretto_openai_agents.instrument import instrument_with

        return instrument_with(agent, self)
