"""The tool state a decision sees: every call and result so far, kept ready for binding.

Learning (to find where an agent took each argument) and serving (to bind a lookup's
arguments) ask the same questions of a session prefix: which results hold a value and at which
path, which values each tool was already passed, what the user has said, where the agent last
wrote. `ToolState` answers them incrementally, one event at a time, with no I/O.

Results come from three places: the agent's own calls (`origin="agent"`), stretto's lookups
(`observe_lookup`, `origin="lookup"`: the agent saw them inside its own result) and calls the
agent never saw, such as the τ²-bench telecom user's on their phone (`origin="other"`). Only the
first two are sources a binding may take values from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.values import ValueIndex, argument_leaves, index_result, normalize


_NOTHING: frozenset[str] = frozenset()


def call_key(tool: str, arguments: dict[str, Any]) -> str:
    """A canonical key for a call: same tool and same arguments give the same key."""
    try:
        return tool + " " + json.dumps(arguments, sort_keys=True, default=str, separators=(",", ":"))
    except (RecursionError, ValueError, TypeError):  # arguments nested beyond what JSON writes
        return tool + " " + repr(sorted(map(str, argument_leaves(arguments))))


@dataclass
class ResultEntry:
    """One result in the tool state, with its values indexed."""

    position: int
    tool: str
    call_id: str
    arguments: dict[str, Any]
    ok: bool
    index: ValueIndex
    by_agent: bool
    after_write: bool = True
    origin: str = "agent"
    """`agent` (the agent's call), `lookup` (stretto's, seen by the agent) or `other` (unseen)."""
    cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Scratch space for derived views of this result (bindings keep record indexes here)."""

    @property
    def visible(self) -> bool:
        """The agent saw this result: a source a binding may take values from."""
        return self.origin != "other"


LOOK_BACK = 8
"""A binding source draws on at most this many of its tool's newest results."""


@dataclass
class ToolState:
    """The tool state x: results (newest last), calls made, the user's words, the last write."""

    manifest: ToolManifest
    look_back: int = LOOK_BACK
    """How many of a tool's newest results a binding source draws on (`bindings_model.BindingOptions`)."""
    results: list[ResultEntry] = field(default_factory=list)
    made: set[str] = field(default_factory=set)
    passed: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    passed_lists: dict[str, set[tuple[str, tuple[str, ...]]]] = field(default_factory=dict)
    user_words: list[str] = field(default_factory=list)
    user_values: set[str] = field(default_factory=set)
    calls_by_tool: dict[str, int] = field(default_factory=dict)
    in_flight: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    writes: int = 0
    position: int = 0
    newest_ok: dict[str, ResultEntry] = field(default_factory=dict)
    """The newest successful visible result of each tool."""
    ok_results: dict[str, list[ResultEntry]] = field(default_factory=dict)
    """Every successful visible result of each tool, oldest first."""
    seen_values: set[str] = field(default_factory=set)
    """Every normalized value a visible result held so far."""
    given: set[str] = field(default_factory=set)
    """Key-like values (see `is_keyish`) the agent passed before any visible result held them."""
    result_for: dict[tuple[str, str, str], ResultEntry] = field(default_factory=dict)
    """(tool, argument, normalized value) -> the newest visible result of a call passing it."""
    passed_by_arg: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    """(tool, argument) -> every normalized value the tool was passed for it (`passed`, by argument)."""
    user_version: int = 0
    """Grows whenever the user speaks, so views that depend on the user's words can be cached."""
    user_source: str | None = None
    """Each user message is also a result of `user_words.USER_TOOL` (a binding source), cut into
    values by this mode (`pattern` or `spans`); None: the user's words are no source."""
    views: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Scratch space for derived views of several results (bindings keep a pool's holders of a
    path here). What refers to a result lives here, never in a result's own `cache`, so that a
    session's state holds no reference cycle and is freed as soon as it is dropped."""
    _user_text: str = ""

    def observe_user(self, text: str) -> None:
        """The user said something: remembered for mention checks (lower-cased)."""
        if text:
            self.user_words.append(text.casefold())
            self._user_text = "\n".join(self.user_words)
            self.user_version += 1
            if self.user_source:
                self._observe_user_words(text)

    def _observe_user_words(self, text: str) -> None:
        """The message as a result of the user pseudo-tool (a source; its values are not `seen`)."""
        from stretto_core.sessions.user_words import USER_TOOL, user_spans

        parsed = user_spans(text, self.user_source)
        if not parsed:
            return
        self.position += 1
        entry = ResultEntry(self.position, USER_TOOL, f"user-{self.user_version}", {}, True,
                            index_result("", parsed), by_agent=False, origin="user")
        self.results.append(entry)
        self.newest_ok[USER_TOOL] = entry
        self.ok_results.setdefault(USER_TOOL, []).append(entry)

    def observe_call(self, call_id: str, tool: str, arguments: dict[str, Any], by_agent: bool = True) -> None:
        """A call was made (its result may come later). A write by the agent ends reads' reach."""
        self.position += 1
        self.in_flight[call_id] = (tool, arguments)
        if not by_agent:
            return
        for leaf in argument_leaves(arguments):
            key = normalize(leaf)
            if key is not None and key not in self.seen_values and is_keyish(key):
                self.given.add(key)
        self._remember_passed(tool, arguments)
        if self.manifest.is_read(tool):
            return
        self.writes += 1
        for entry in self.results:
            entry.after_write = False
        self.made = set()

    def observe_result(self, call_id: str, tool: str, content: str, parsed: Any, error: bool,
                       by_agent: bool = True, arguments: dict[str, Any] | None = None,
                       origin: str | None = None) -> ResultEntry:
        """A result arrived; its values join the state.

        `origin` defaults to `agent` for the agent's calls and `other` otherwise; stretto's own
        lookups go through `observe_lookup`.
        """
        self.position += 1
        pending = self.in_flight.pop(call_id, None)
        args = arguments if arguments is not None else (pending[1] if pending else {})
        entry = ResultEntry(self.position, tool, call_id, args, not error,
                            index_result(content, parsed) if not error else ValueIndex(), by_agent,
                            origin=origin or ("agent" if by_agent else "other"))
        self.results.append(entry)
        if by_agent and self.manifest.is_read(tool):
            self.made.add(call_key(tool, args))
        if entry.visible:
            self._index_visible(entry)
        return entry

    def observe_lookup(self, call_id: str, tool: str, arguments: dict[str, Any], content: str,
                       parsed: Any = None, error: bool = False) -> ResultEntry:
        """stretto made a lookup and showed its result to the agent.

        The lookup counts as made since the last write and its values as passed to the tool (so
        no binding proposes it again; `calls_by_tool` counts it too), and its result is a source.
        """
        self.position += 1
        self._remember_passed(tool, arguments)
        self.made.add(call_key(tool, arguments))
        return self.observe_result(call_id, tool, content, parsed, error, by_agent=False,
                                   arguments=arguments, origin="lookup")

    def _index_visible(self, entry: ResultEntry) -> None:
        if entry.ok:
            self.newest_ok[entry.tool] = entry
            self.ok_results.setdefault(entry.tool, []).append(entry)
            self.seen_values.update(entry.index.first_path)
        for name, value in entry.arguments.items():
            key = normalize(value)
            if key is not None:
                self.result_for[(entry.tool, name, key)] = entry

    def user_text(self) -> str:
        """Everything the user said, case-folded, one message a line."""
        return self._user_text

    def mentioned_key(self, key: str) -> bool:
        """`mentioned` for a value already normalized."""
        return len(key) >= 3 and key in self._user_text

    def _remember_passed(self, tool: str, arguments: dict[str, Any]) -> None:
        self.calls_by_tool[tool] = self.calls_by_tool.get(tool, 0) + 1
        done = self.passed.setdefault(tool, set())
        lists = self.passed_lists.setdefault(tool, set())
        for name, value in arguments.items():
            if isinstance(value, (list, tuple)):
                lists.add((name, tuple(sorted(filter(None, (normalize(v) for v in value))))))
            key = normalize(value)
            if key is not None:
                done.add((name, key))
                by_arg = self.passed_by_arg.get((tool, name))
                if by_arg is None:
                    by_arg = self.passed_by_arg[(tool, name)] = set()
                by_arg.add(key)

    def passed_values(self, tool: str, arg: str) -> set[str] | frozenset[str]:
        """The normalized values `tool` was already passed for `arg` (do not modify)."""
        return self.passed_by_arg.get((tool, arg), _NOTHING)

    def already_passed(self, tool: str, arg: str, value: Any) -> bool:
        key = normalize(value)
        return key is not None and (arg, key) in self.passed.get(tool, ())

    def already_passed_list(self, tool: str, arg: str, values: list[Any]) -> bool:
        key = tuple(sorted(filter(None, (normalize(v) for v in values))))
        return (arg, key) in self.passed_lists.get(tool, ())

    def already_made(self, tool: str, arguments: dict[str, Any]) -> bool:
        """The same read was made since the last write, or is in flight in this turn."""
        key = call_key(tool, arguments)
        if key in self.made:
            return True
        return any(call_key(t, a) == key for t, a in self.in_flight.values())

    def mentioned(self, value: Any) -> bool:
        """The user wrote this value (case-insensitive substring of what they said)."""
        key = normalize(value)
        if key is None or len(key) < 3:
            return False
        return any(key in words for words in self.user_words)

    def newest_holding(self, tool: str, path: str) -> ResultEntry | None:
        """The most recent successful result of `tool` with values at `path`."""
        for entry in reversed(self.results):
            if entry.tool == tool and entry.ok and path in entry.index.by_path:
                return entry
        return None

    def find_source(self, value: Any) -> tuple[ResultEntry, str] | None:
        """The most recent successful result holding `value`, and the first path that holds it."""
        key = normalize(value)
        if key is None:
            return None
        for entry in reversed(self.results):
            if entry.ok:
                path = entry.index.first_path.get(key)
                if path is not None:
                    return entry, path
        return None

    def values_since_write(self) -> set[str]:
        out: set[str] = set()
        for entry in self.results:
            if entry.after_write:
                out.update(entry.index.first_path)
        return out


def is_keyish(key: str) -> bool:
    """A normalized value that looks like a key a person gives: at least 4 characters, a digit."""
    return len(key) >= 4 and any(ch.isdigit() for ch in key)


def leaves_in_state(state: ToolState, arguments: dict[str, Any]) -> bool:
    """Every argument value of a call sits in a result received since the last write."""
    values = state.values_since_write()
    for leaf in argument_leaves(arguments):
        key = normalize(leaf)
        if key is None or key not in values:
            return False
    return True
