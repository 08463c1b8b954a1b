"""Turn accounting: what decided each LLM turn of a session (paper §4.1, Proposition 2).

Every LLM turn is one of:
- `reply`: no calls (a message to the user, or the final answer);
- `write`: at least one call of a tool that may change state (writes and generic tools alike);
- `pure`: no such call, but one of a pure tool (`think`, `calculate`): it changes nothing, so a
  read's reach runs across it, but no lookup ever makes it, so the turn cannot be saved;
- `read`: every call a read;
- `ceiling`: a read turn that a speculator binding from results could have saved: every call a
  read whose every argument value appears in a tool result received after the agent's last
  write, with at least one such result before the turn (the speculator only acts after one).

Writes by others (the τ²-bench telecom user on their phone) do not end a read's reach, as in the
replay (paper App. D); only the agent's own writes do. The results of the user's own calls are
not the agent's tool state either: the agent never sees them, and neither would a speculator
between the agent and its tools.
"""

from __future__ import annotations

from enum import Enum

from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Session, ToolResult, UserMessage
from stretto_core.sessions.value_written import written_in
from stretto_core.sessions.values import argument_leaves, index_result, normalize


class TurnClass(str, Enum):
    reply = "reply"
    write = "write"
    pure = "pure"
    read = "read"
    ceiling = "ceiling"


MIN_WRITTEN_LENGTH = 3
"""A value counts as one the user wrote only from this many characters (`state.mentioned` too)."""


def classify_turns(session: Session, manifest: ToolManifest, *, user_words: bool = False) -> list[TurnClass]:
    """The class of each LLM turn of the session, in order.

    With `user_words`, an argument may also be a value the user wrote so far (a case-insensitive
    part of their words): the paper's "with the user's words" ceiling (§4.1, Table 1b).
    """
    classes: list[TurnClass] = []
    since_write: set[str] = set()
    results_since_write = 0
    users_calls: set[str] = set()
    said: list[str] = []
    for event in session.events:
        if isinstance(event, LLMTurn):
            cls = _classify(event, manifest, since_write, results_since_write, said)
            classes.append(cls)
            if cls is TurnClass.write:
                since_write = set()
                results_since_write = 0
        elif isinstance(event, ToolResult):
            if event.call_id in users_calls:
                continue  # the user's phone answered the user; the agent never saw it
            results_since_write += 1
            since_write.update(index_result(event.content, event.parsed).first_path)
        elif isinstance(event, UserMessage):
            users_calls.update(c.call_id for c in event.calls)
            if user_words and event.text:
                said.append(event.text.casefold())
        # a Lookup is what stretto added, not the agent's own tool state
    return classes


def _classify(turn: LLMTurn, manifest: ToolManifest, values: set[str], results: int,
              said: list[str]) -> TurnClass:
    if not turn.calls:
        return TurnClass.reply
    if any(manifest.ends_reach(c.tool) for c in turn.calls):
        return TurnClass.write
    if not all(manifest.is_read(c.tool) for c in turn.calls):
        return TurnClass.pure
    if results == 0:
        return TurnClass.read
    for call in turn.calls:
        for leaf in argument_leaves(call.arguments):
            key = normalize(leaf)
            if key is None:
                return TurnClass.read
            if key not in values and not _written(key, said):
                return TurnClass.read
    return TurnClass.ceiling


def _written(key: str, said: list[str]) -> bool:
    return len(key) >= MIN_WRITTEN_LENGTH and any(written_in(words, key) for words in said)
