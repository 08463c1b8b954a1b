"""The options of an instrumented agent: the core's `StrettoOptions`, checked once there, plus
what only this SDK has (which conversation a run belongs to, which results are errors, how many
conversations stay open).

Every serving field (flow, reads, writes, theta, budgets, ...) is the core's own, with the core's
checks and one-line messages (`stretto_core.serve.options`), so a value means the same thing
here as in every other adapter and the proxy. Tool names are lists: `reads="get_order"` is
refused (write `reads=["get_order"]`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional, Union

from pydantic import field_validator

from stretto_core.serve.option_values import check_count
from stretto_core.serve.options import ServeOptions
from stretto_core.serve.options import StrettoOptions as CoreOptions

if TYPE_CHECKING:
    from agents import Agent, RunContextWrapper
    from agents.tool_context import ToolContext

SessionKey = Callable[["RunContextWrapper[Any]"], "str | None"]
"""Names the conversation a run belongs to; runs with the same name share one stretto session."""

ErrorResults = Callable[["ToolContext[Any]", Any], bool]
"""Says whether a function tool's return value is an error (the SDK has no flag for that)."""


class InstrumentOptions(ServeOptions, total=False):
    """`instrument`'s keyword options, typed: the core's, and this SDK's own three."""

    session_key: Union[str, Callable[..., Any], None]
    error_results: Optional[Callable[..., Any]]
    max_conversations: int


class StrettoOptions(CoreOptions):
    """How stretto serves one agent.

    Args:
        flow: The flow to serve (a `stretto_core.Flow` or the path of a flow file). `None`
            records sessions and makes no lookup.
        reads: Tools that only read, declared in code (a list of names). A tool is looked up
            only when the flow marks it read *and* this, a manifest, or the tool's MCP
            annotations (`readOnlyHint`) do; a tool of unknown kind never is.
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
        theta, policy, per_call, per_session, lookup_timeout, call_budget, allow, deny, shadow:
            the serving knobs of `stretto_core.Stretto` (threshold, scoring rule, lookups per
            call and per session, seconds per lookup and per call, tool allow- and denylists,
            shadow mode), checked by the core's `StrettoOptions`.
        max_conversations: How many conversations (`session_key`) stay open at once; the least
            recently used one is closed beyond that.
    """

    session_key: Union[str, Callable[..., Any], None] = None
    """Which conversation a run belongs to: None (each run its own), the attribute or key of the
    run context holding the conversation id, or a callable taking the `RunContextWrapper`."""
    error_results: Optional[Callable[..., Any]] = None
    """Which function-tool results are errors: a callable (tool context, output) -> bool."""
    max_conversations: int = 1024
    """How many conversations stay open at once; the least recently used one is closed beyond that."""

    @field_validator("max_conversations", mode="before")
    @classmethod
    def _open_at_once(cls, value: Any) -> int:
        return check_count("max_conversations", value, least=1)

    def core_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of `stretto_core.Stretto` these options set (all but the flow, the
        harness and the model's name, which the adapter gives)."""
        return {name: getattr(self, name) for name in CoreOptions.model_fields
                if name not in ("flow", "harness", "agent_model")}

    def instrument(self, agent: Agent[Any]) -> Agent[Any]:
        """A copy of `agent` served by stretto with these options (see `instrument`)."""
        from stretto_openai_agents.instrument import instrument_with

        return instrument_with(agent, self)
