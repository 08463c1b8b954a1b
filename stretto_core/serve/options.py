"""The options of a served flow, as one model checked once: `Stretto` builds one from its keyword
arguments, so every adapter (OpenAI Agents, ADK, LangGraph, Claude, FastMCP) and the proxy
accept and refuse the same values with the same one-line message.

Each field has a type and a docstring (pydantic's `use_attribute_docstrings`), so a docs page
can list them from `StrettoOptions.model_fields`. A bad value raises `OptionError` (a
`ValueError` and a `StrettoError`) naming the field: `reads must be a list of tool names, not
one string: write reads=['get_order']`.

The same fields as typed keyword dictionaries (`ServeOptions` and its parts) let each adapter
type its `**options` (`Unpack[...]`, PEP 692), so a type checker reports `theta="x"` or
`reads=3` in a user's code; the values are still checked here, at run time, in one place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from typing_extensions import TypedDict

from stretto_core.errors import OptionError
from stretto_core.flow.ir import Flow
from stretto_core.serve.lookups import CALL_BUDGET, LOOKUP_TIMEOUT
from stretto_core.serve.option_values import (check_count, check_days, check_fraction, check_names, check_seconds,
                                              check_text, quoted)
from stretto_core.serve.speculator import DEFAULT_THETA, MAX_LOOKUPS_PER_CALL, MAX_LOOKUPS_PER_SESSION
from stretto_core.sessions.manifest import ToolManifest

Policy = Literal["use", "next"]


class Limits(TypedDict, total=False):
    """The serving knobs every adapter and the proxy take as keywords (see `StrettoOptions`)."""

    theta: float
    policy: Policy
    per_call: int
    per_session: int
    lookup_timeout: float
    call_budget: float
    shadow: bool
    holdout: float


class ServingKnobs(Limits, total=False):
    """The knobs, and which tools lookups may use by name."""

    allow: Optional[Iterable[str]]
    deny: Iterable[str]


class Labels(TypedDict, total=False):
    """What each recorded session's header names."""

    app: Optional[str]
    agent_model: Optional[str]


class Authority(TypedDict, total=False):
    """Which tools are reads, declared in code or by a manifest, and where sessions go."""

    reads: Iterable[str]
    writes: Iterable[str]
    manifest: Union[ToolManifest, str, Path, None]
    store: Union[str, Path, bool, None]


class Keeping(TypedDict, total=False):
    """How recorded sessions are kept: how long, and which fields are hashed before writing."""

    retain_days: Optional[float]
    redact_fields: Iterable[str]


class KnobsAndLabels(ServingKnobs, Labels, Keeping, total=False):
    """The knobs and the header's names (for an adapter that takes the authority explicitly)."""


class ServeOptions(ServingKnobs, Labels, Keeping, Authority, total=False):
    """Every keyword option of `Stretto` but the flow and the harness, typed (an adapter's
    `**options: Unpack[ServeOptions]`)."""


class StrettoOptions(BaseModel):
    """How stretto serves one app's agent: the flow, the authority on which tools are reads,
    where sessions go, and the serving knobs. `Stretto(**fields)` and `Stretto.from_options(...)`
    take these; adapters pass their own options on unchanged."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, arbitrary_types_allowed=True,
                              use_attribute_docstrings=True)

    flow: Union[Flow, str, Path, None] = None
    """The flow to serve: a `Flow`, or the path of a flow file. None records sessions and makes no lookup."""
    reads: tuple[str, ...] = ()
    """Tools that only read, declared in code (a list of names). A tool is looked up only when the
    flow marks it read *and* this, a manifest, or the tool's own annotations do."""
    writes: tuple[str, ...] = ()
    """Tools that change something (a list of names): never looked up, whatever else says."""
    manifest: Union[ToolManifest, str, Path, None] = None
    """A tool manifest, or the path of one, saying which tools are reads."""
    store: Union[str, Path, bool, None] = None
    """The folder for recorded sessions (None or True: `.stretto/sessions`); False records nothing."""
    harness: str = "custom"
    """The harness named in each session's header (each adapter sets its own)."""
    agent_model: Optional[str] = None
    """The model's name written into each session's header."""
    app: Optional[str] = None
    """The app's name written into each session's header."""
    theta: float = DEFAULT_THETA
    """The speculator's threshold, in [0, 1]: a lookup is made when its score reaches it."""
    policy: Policy = "use"
    """How lookups are scored: `use` (used before the next write) or `next` (the likeliest next read)."""
    per_call: int = MAX_LOOKUPS_PER_CALL
    """At most this many lookups after one of the agent's calls (0: none)."""
    per_session: int = MAX_LOOKUPS_PER_SESSION
    """At most this many lookups in one session (0: none)."""
    lookup_timeout: float = LOOKUP_TIMEOUT
    """Seconds one lookup may take before it is abandoned and recorded as failed."""
    call_budget: float = CALL_BUDGET
    """Seconds all the lookups after one of the agent's calls may take together."""
    allow: Optional[tuple[str, ...]] = None
    """Allowlist: look up only these tools (a list of names); None: any tool known to be a read."""
    deny: tuple[str, ...] = ()
    """Denylist: never look up these tools (a list of names), whatever the flow or a manifest says."""
    shadow: bool = False
    """Decide as when serving and record each would-be lookup (a `shadow_lookup` event), but call
    nothing and append nothing to the agent's results: a trial to watch. `STRETTO_SHADOW=1` in the
    environment does the same for the sessions that start while it is set."""
    holdout: float = 0.0
    """The fraction of sessions, drawn at random, served nothing and recorded as mode `holdout`: a
    control the served sessions can be compared with (e.g. 0.1)."""
    retain_days: Optional[float] = None
    """Delete recorded sessions older than this many days (by their start time) when serving starts."""
    redact_fields: tuple[str, ...] = ()
    """Hash every value under these field names before a session is written (a key in
    `STRETTO_REDACT_KEY`), so raw identifiers are never stored (`sessions/redact.py`)."""

    def __init__(self, **fields: Any) -> None:
        try:
            super().__init__(**fields)
        except ValidationError as exc:
            raise OptionError(one_line(exc, type(self))) from None

    @field_validator("reads", "writes", "deny", "redact_fields", mode="before")
    @classmethod
    def _names(cls, value: Any, info: Any) -> tuple[str, ...]:
        return check_names(info.field_name, value)

    @field_validator("allow", mode="before")
    @classmethod
    def _allowed(cls, value: Any) -> tuple[str, ...] | None:
        return None if value is None else check_names("allow", value)

    @field_validator("theta", "holdout", mode="before")
    @classmethod
    def _fraction(cls, value: Any, info: Any) -> float:
        return check_fraction(info.field_name, value)

    @field_validator("per_call", "per_session", mode="before")
    @classmethod
    def _budget(cls, value: Any, info: Any) -> int:
        return check_count(info.field_name, value)

    @field_validator("lookup_timeout", "call_budget", "retain_days", mode="before")
    @classmethod
    def _seconds(cls, value: Any, info: Any) -> float | None:
        if info.field_name == "retain_days":
            return None if value is None else check_days(info.field_name, value)
        return check_seconds(info.field_name, value)

    @field_validator("harness", "agent_model", "app", mode="before")
    @classmethod
    def _text(cls, value: Any, info: Any) -> Any:
        return value if value is None and info.field_name != "harness" else check_text(info.field_name, value)

    def serving_allowlist(self) -> frozenset[str] | None:
        """The tools the engine may look up by name: the allowlist less the denylist (None: any)."""
        return None if self.allow is None else frozenset(self.allow) - frozenset(self.deny)


def one_line(error: ValidationError, model: type[BaseModel]) -> str:
    """A validation error of `model` as one line: each field's first problem, naming the field."""
    seen: dict[str, str] = {}
    for item in error.errors(include_url=False):
        field = ".".join(str(part) for part in item["loc"][:1]) or "options"
        if field in seen:
            continue
        cause = (item.get("ctx") or {}).get("error")
        if isinstance(cause, OptionError):
            seen[field] = str(cause)
        elif item["type"] == "extra_forbidden":
            seen[field] = f"no option {field!r}"
        else:
            seen[field] = f"{field} must be {_expected(model, field)}, got {quoted(item.get('input'))}"
    return "; ".join(seen.values())


def _expected(model: type[BaseModel], field: str) -> str:
    """What a field's annotation allows, in words: `str, Path, bool or None`."""
    fields = model.model_fields
    annotation = fields[field].annotation if field in fields else Any
    names = [_type_name(t) for t in getattr(annotation, "__args__", None) or (annotation,)]
    return " or ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " or " + names[-1]


def _type_name(kind: Any) -> str:
    if kind is type(None):
        return "None"
    return getattr(kind, "__name__", None) or str(kind)
