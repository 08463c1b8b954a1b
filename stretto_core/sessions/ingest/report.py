"""What an ingest read, wrote and skipped: the counts a user checks against the source.

Every count is taken from the sessions as written (episodes, LLM turns, the agent's calls, the
user's own calls, results), so a lost call shows as a difference from the source's own count.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from stretto_core.sessions.ingest.common import SkippedRecord
from stretto_core.sessions.model import LLMTurn, Session, ToolResult, UserMessage


class Counts(BaseModel):
    """Counts over one file, or over all files of an ingest."""

    path: str = ""
    episodes: int = 0
    llm_turns: int = 0
    tool_calls: int = 0
    """Calls the agent made."""
    user_calls: int = 0
    """Calls the user made themselves (τ²-bench telecom's phone)."""
    tool_results: int = 0
    unanswered_calls: int = 0
    skipped: int = 0
    unreadable: bool = False

    @property
    def calls_read(self) -> int:
        return self.tool_calls + self.user_calls

    def add_session(self, session: Session) -> None:
        self.episodes += 1
        answered: set[str] = set()
        calls: list[str] = []
        for event in session.events:
            if isinstance(event, LLMTurn):
                self.llm_turns += 1
                self.tool_calls += len(event.calls)
                calls.extend(c.call_id for c in event.calls)
            elif isinstance(event, UserMessage):
                self.user_calls += len(event.calls)
                calls.extend(c.call_id for c in event.calls)
            elif isinstance(event, ToolResult):
                self.tool_results += 1
                answered.add(event.call_id)
        self.unanswered_calls += sum(1 for c in calls if c not in answered)

    def absorb(self, other: "Counts") -> None:
        for name in ("episodes", "llm_turns", "tool_calls", "user_calls", "tool_results",
                     "unanswered_calls", "skipped"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


class IngestReport(BaseModel):
    """One `ingest` run over one source: per file counts, skipped records, and quirks met."""

    source: str
    out_dir: str
    files: list[Counts] = Field(default_factory=list)
    skipped: list[SkippedRecord] = Field(default_factory=list)
    notes: dict[str, int] = Field(default_factory=dict)
    manifest_problems: list[str] = Field(default_factory=list)
    sessions_written: int = 0
    seconds: float = 0.0

    @property
    def totals(self) -> Counts:
        total = Counts(path="(all)")
        for counts in self.files:
            total.absorb(counts)
        return total

    def add_notes(self, notes: Counter) -> None:
        for key, n in notes.items():
            self.notes[key] = self.notes.get(key, 0) + n

    def skipped_by_kind(self) -> dict[str, list[SkippedRecord]]:
        groups: dict[str, list[SkippedRecord]] = {}
        for record in self.skipped:
            groups.setdefault(record.kind, []).append(record)
        return groups
