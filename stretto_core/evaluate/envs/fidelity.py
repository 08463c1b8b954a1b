"""How faithfully an environment reproduces a recording: replay every recorded call, compare.

Environment replay is only sound if the environment returns what the recorded agent saw. This
module replays a session's calls in their recorded order on a fresh environment and compares each
result with the record, byte for byte and after masking what no replay can reproduce (AgentDojo's
wall-clock stamps and set order, older runs' unvalidated numbers, pydantic's docs URL version).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from stretto_core.evaluate.envs import ToolEnvironment, open_environment
from stretto_core.evaluate.envs.recordings import source_name
from stretto_core.sessions.model import LLMTurn, Lookup, Session, ToolCall, ToolResult, UserMessage

DEFENCE_PLACEHOLDERS = ("<Data omitted because a prompt injection was detected>",)
"""Results a defence's own model wrote in place of the tool's; no offline replay gives them."""

_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?")
_WHOLE_FLOAT = re.compile(r"(\d)\.0\b")
_PYDANTIC_URL = re.compile(r"(errors\.pydantic\.dev/)\d+(\.\d+)*/")


def normalize_whitespace(text: str) -> str:
    """Trailing spaces of each line and blank edges dropped: formatting, not content."""
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def mask(text: str) -> str:
    """The text with what no replay can reproduce replaced by fixed tokens."""
    text = _STAMP.sub("<time>", normalize_whitespace(text))
    text = _PYDANTIC_URL.sub(r"\1<v>/", text)
    return _WHOLE_FLOAT.sub(r"\1", text)


def same_result(recorded: str, replayed: str) -> bool:
    """Equal after masking, comparing lines as multisets (set order follows the hash seed)."""
    if recorded == replayed:
        return True
    a, b = mask(recorded), mask(replayed)
    return a == b or Counter(a.splitlines()) == Counter(b.splitlines())


@dataclass
class CallOutcome:
    """One recorded call replayed: what the record says and what the environment returned."""

    call_id: str
    tool: str
    recorded: str
    replayed: str
    recorded_error: bool
    replayed_error: bool
    kind: str = "call"

    @property
    def identical(self) -> bool:
        return self.recorded == self.replayed

    @property
    def equal_masked(self) -> bool:
        return same_result(self.recorded, self.replayed)

    @property
    def by_defence(self) -> bool:
        return self.recorded.strip() in DEFENCE_PLACEHOLDERS


@dataclass
class SessionFidelity:
    """Every replayed call of one session, and the results the record pairs with no call."""

    session_id: str
    source: str
    outcomes: list[CallOutcome] = field(default_factory=list)
    unpaired: int = 0


def replay_recorded_calls(session: Session, env: ToolEnvironment | None = None) -> SessionFidelity:
    """Replay each recorded result's call, in the order the results were recorded.

    The results' order is the order the harness executed the calls in; a call the record gives no
    result (an iteration limit cut it off) was never executed and is not replayed. User calls
    (τ² telecom's phone) run with requestor "user"; stretto's own lookups are replayed too.
    Without `env`, a fresh environment of the session's episode is opened.
    """
    env = env if env is not None else open_environment(session.header)
    calls: dict[str, tuple[ToolCall, str]] = {}
    report = SessionFidelity(session.session_id, source_name(session.header))
    for event in session.events:
        if isinstance(event, UserMessage):
            calls.update((c.call_id, (c, "user")) for c in event.calls)
        elif isinstance(event, ToolResult):
            _replay_result(env, event, calls, report)
        elif isinstance(event, Lookup):
            content, error = env.call(event.tool, event.arguments)
            report.outcomes.append(CallOutcome(event.call_id, event.tool, event.content, content,
                                               event.error, error, kind="lookup"))
        elif isinstance(event, LLMTurn):
            calls.update((c.call_id, (c, "agent")) for c in event.calls)
    return report


def _replay_result(env: ToolEnvironment, result: ToolResult,
                   calls: dict[str, tuple[ToolCall, str]], report: SessionFidelity) -> None:
    paired = calls.pop(result.call_id, None)
    if paired is None:
        report.unpaired += 1
        return
    call, requestor = paired
    content, error = env.call(call.tool, call.arguments, requestor)
    report.outcomes.append(CallOutcome(call.call_id, call.tool, result.content, content,
                                       result.error, error))


@dataclass
class SourceTally:
    """Counts for one source: calls replayed, identical, equal after masking, and the misses."""

    sessions: int = 0
    calls: int = 0
    identical: int = 0
    masked: int = 0
    by_defence: int = 0
    error_flag_differs: int = 0
    unpaired: int = 0
    failed_sessions: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)

    def add(self, report: SessionFidelity, keep_examples: int = 5) -> None:
        self.sessions += 1
        self.unpaired += report.unpaired
        for outcome in report.outcomes:
            if outcome.by_defence:
                self.by_defence += 1
                continue
            self.calls += 1
            self.identical += outcome.identical
            self.masked += outcome.equal_masked
            self.error_flag_differs += outcome.recorded_error != outcome.replayed_error
            if not outcome.equal_masked and len(self.examples) < keep_examples:
                self.examples.append({"session": report.session_id, "tool": outcome.tool,
                                      "recorded": outcome.recorded[:300],
                                      "replayed": outcome.replayed[:300]})

    def merge(self, other: SourceTally, keep_examples: int = 5) -> None:
        for name in ("sessions", "calls", "identical", "masked", "by_defence",
                     "error_flag_differs", "unpaired", "failed_sessions"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.examples.extend(other.examples[: max(0, keep_examples - len(self.examples))])
