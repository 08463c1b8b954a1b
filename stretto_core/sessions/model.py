"""The one session format every harness writes and every part of stretto reads.

A session is one episode of one agent: a header, then its events in order. On disk it is JSONL,
the header on the first line and one event per line after it (see `store.py` and
`docs/formats.md`). Everything downstream (turn accounting, learning, replay) reads these models
and nothing else, so a new harness only needs a converter into them.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from stretto_core.sessions.jsonline import loads
from stretto_core.sessions.limits import deeper_than, may_nest
from stretto_core.sessions.manifest import ToolManifest

SESSION_FORMAT_VERSION = 3
"""The version writers write; bump it when an older reader would misread (docs/formats.md)."""

READABLE_SESSION_VERSIONS = (1, 2, 3)
"""Versions readers accept: a version 1 file is a version 2 file without `refusal` events, and a
version 2 file a version 3 one without a header's `mode`/`flow_*` and `shadow_lookup` events."""

SessionMode = Literal["record", "shadow", "holdout", "serve"]
"""How stretto treated a live session: recorded only; decided and recorded would-be lookups
without making them; held out of serving at random (a control); served the flow's lookups."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class SessionHeader(_Model):
    """Who ran the episode, on what, and how it went: the first line of a session file."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    stretto_session: Literal[1, 2, 3] = SESSION_FORMAT_VERSION
    session_id: str
    harness: str
    agent_model: str | None = None
    app: str | None = None
    manifest: ToolManifest | None = None
    manifest_hash: str | None = None
    task_id: str | None = None
    trial: int | None = None
    reward: float | None = None
    solo: bool = False
    started_at: datetime | None = None
    source: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    mode: SessionMode | None = None
    """How stretto treated this session when it was recorded live; None: not live (ingested, older)."""
    flow_version: int | None = None
    """The committed version of the flow that decided in this session (`flow commit`), when it has one."""
    flow_sha256: str | None = None
    """The SHA-256 of the flow file's bytes (or an in-memory flow's JSON) that decided in this session."""


class ToolCall(_Model):
    """One call of a tool: its id (unique in the session), the tool's name and its arguments."""

    call_id: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Usage(_Model):
    """Token usage of one LLM turn, when the harness reports it."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    cache_read_input_tokens: int | None = None
    """Of the input tokens, those read from a prompt cache (when the harness reports it)."""
    cache_creation_input_tokens: int | None = None
    """Of the input tokens, those written to a prompt cache."""


class UserMessage(_Model):
    """What the user said; `calls` holds the user's own tool calls (τ²-bench telecom's phone)."""

    kind: Literal["user"] = "user"
    text: str = ""
    calls: list[ToolCall] = Field(default_factory=list)
    at: datetime | None = None


class LLMTurn(_Model):
    """One LLM turn of the agent: its text and the calls it made (none for a reply)."""

    kind: Literal["llm_turn"] = "llm_turn"
    text: str = ""
    calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage | None = None
    inferred: bool | None = None
    """True when the harness showed no model turn and stretto inferred this one from a call."""
    at: datetime | None = None


class ToolResult(_Model):
    """The result of one call, as text (what the agent saw) and parsed, when it parses."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    tool: str
    content: str = ""
    parsed: Any = None
    error: bool = False
    appended: str | None = None
    """The text stretto appended to this result (its lookups, fenced), when it appended any."""
    repeats: str | None = None
    """The call id of a lookup of the same call the agent already had: the agent ignored it."""
    at: datetime | None = None


class Lookup(_Model):
    """A read stretto made on its own after a tool result, and appended to that result.

    `after_call_id` names the call whose result carried it; `used` says whether the agent later
    made the same call before its next write (filled in when known, e.g. by replay).
    """

    kind: Literal["lookup"] = "lookup"
    call_id: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    content: str = ""
    parsed: Any = None
    error: bool = False
    after_call_id: str | None = None
    site: str | None = None
    score: float | None = None
    reach: float | None = None
    binding: float | None = None
    policy: str | None = None
    used: bool | None = None
    abandoned: bool | None = None
    """True when stretto gave up on the lookup (it timed out or raised): recorded, never shown."""
    at: datetime | None = None


RefusalReason = Literal["unlisted", "marked_write", "not_read_only", "schema_changed", "contract_changed",
                        "denied", "not_allowed", "not_in_flow", "call_limit", "session_limit", "call_budget",
                        "lookup_timeout",
                        "listing_stale", "argument_refused"]
"""Why stretto would not look a tool up (docs/formats.md lists each one's meaning)."""


class Refusal(_Model):
    """A guard stopped lookups: of one tool from here on, or one lookup the flow had chosen.

    A proxy records one when its server re-lists a tool with another contract or kind, or drops
    it; the engine when a budget cuts a lookup the flow chose, or a lookup outlives its time.
    `lifted` marks the end of an earlier refusal of the same tool (it is listed as it was again).
    """

    kind: Literal["refusal"] = "refusal"
    tool: str
    reason: RefusalReason
    detail: str = ""
    after_call_id: str | None = None
    lookup_call_id: str | None = None
    lifted: bool | None = None
    at: datetime | None = None


class ShadowLookup(_Model):
    """A lookup the flow would have made here, in a shadow session: decided as when serving
    (chains included, each conditioned on the ones before it as if made), never called and never
    appended. `promote` scores each site on these against what the agent then did."""

    kind: Literal["shadow_lookup"] = "shadow_lookup"
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    after_call_id: str | None = None
    site: str | None = None
    score: float | None = None
    reach: float | None = None
    binding: float | None = None
    sources: list[str] = Field(default_factory=list)
    """Where each argument's value would have come from (the binding's sources, in argument order)."""
    policy: str | None = None
    at: datetime | None = None


Event = Annotated[Union[UserMessage, LLMTurn, ToolResult, Lookup, Refusal, ShadowLookup], Field(discriminator="kind")]
EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Event)


class Session(_Model):
    """A whole session in memory: the header and its ordered events."""

    header: SessionHeader
    events: list[Event] = Field(default_factory=list)

    @property
    def session_id(self) -> str:
        return self.header.session_id

    def llm_turns(self) -> list[LLMTurn]:
        return [e for e in self.events if isinstance(e, LLMTurn)]

    def agent_calls(self) -> list[ToolCall]:
        return [c for e in self.events if isinstance(e, LLMTurn) for c in e.calls]

    def results_by_call(self) -> dict[str, ToolResult]:
        return {e.call_id: e for e in self.events if isinstance(e, ToolResult)}


def parse_event(data: dict[str, Any]) -> Event:
    """Validate one event line's JSON object into its model."""
    return EVENT_ADAPTER.validate_python(data)


def parse_json_content(text: str) -> Any:
    """The parsed JSON of a tool result's text, or None when it is not JSON, or when it nests
    deeper than `limits.MAX_DEPTH` (the text is kept; nothing deeper is ever parsed)."""
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    if not stripped or stripped[0] not in '[{"' and not _looks_like_json_scalar(stripped):
        return None
    try:
        value = loads(stripped)
    except (ValueError, RecursionError):
        return None
    if may_nest(stripped) and deeper_than(value):
        return None
    return value


def _looks_like_json_scalar(text: str) -> bool:
    return text in ("true", "false", "null") or text[0] in "-0123456789"


def manifest_hash(manifest: ToolManifest) -> str:
    """A short, stable hash of a manifest, so a header can name one without carrying it."""
    body = manifest.model_dump_json(exclude_none=True).encode()
    return hashlib.sha256(body).hexdigest()[:16]
