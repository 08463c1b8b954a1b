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

from sys import intern
from dataclasses import dataclass, field
from typing import Any

from stretto_core.sessions.call_keys import call_key  # noqa: F401 - the key learning and replay import from here
from stretto_core.sessions.focus import (NOTHING_HELD, Focus, FocusedIndex, KeyishOnly, holds_key,
                                         is_keyish, keyish_keys)
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import UserMessage
from stretto_core.sessions.said_words import said_words
from stretto_core.sessions.shared_indexes import (FULL_INDEX_CACHE, INDEX_CACHE, clear_index_caches,  # noqa: F401
                                                  clear_result_indexes, shared_focused, shared_index)
from stretto_core.sessions.shared_tuples import shared
from stretto_core.sessions.user_text import UserText
from stretto_core.sessions.user_words import USER_TOOL
from stretto_core.sessions.values import ValueIndex, argument_leaves, index_result, normalize


_NOTHING: frozenset[str] = frozenset()


@dataclass(slots=True)
class ResultEntry:
    """One result in the tool state, with its values indexed (slots: a served session holds dozens)."""

    position: int
    tool: str
    call_id: str
    arguments: dict[str, Any]
    ok: bool
    index: ValueIndex
    by_agent: bool
    origin: str = "agent"
    """`agent` (the agent's call), `lookup` (stretto's, seen by the agent) or `other` (unseen)."""
    cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Scratch space for derived views of this result (bindings keep record indexes here; a
    plain table, not made lazily: it is read at every decision, a property there costs CPU)."""

    @property
    def visible(self) -> bool:
        """The agent saw this result: a source a binding may take values from."""
        return self.origin != "other"

    @property
    def index_views(self) -> dict[Any, Any]:
        """Scratch space for views of this result that depend on its values alone (not on the
        user's words): its index keeps them (`ValueIndex.views`), shared with every state
        holding the same result, learned or served; an index of another kind, this entry's own
        `cache`."""
        index = self.index
        kind = type(index)
        if kind is ValueIndex or kind is FocusedIndex:
            views = index.views
            if views is None:
                views = index.views = {}
            return views
        return self.cache


LOOK_BACK = 8
"""A binding source draws on at most this many of its tool's newest results."""

SERVED_USER_TEXT = 64 * 1024
"""A served state keeps the newest this many characters of what the user said (whole messages)."""

LEARNING_FILTER_FROM = 16 * 1024
"""A full state (learning, replay) lives one session: its user text gets a filter only when long."""

SERVED_REMEMBERED = 1024
"""A served state remembers at most this many calls made since the last write, values passed per
tool and argument, and lists passed per tool (beyond, some are forgotten)."""

FEW_PASSED = 8
"""A served state keeps up to this many values passed for one argument as a tuple (`_pass_few`)."""

SERVED_SEEN = 4096
"""A served state remembers at most this many key-like values results held and values given before
any result held them (beyond, some are forgotten)."""

SERVED_CALL_RESULTS = 512
"""A served state remembers the results of at most this many (tool, argument, value) calls passed
(`result_for`; each keeps its result's key-like values, about 0.8 KB in τ² retail; the oldest are
forgotten first). A 1,000-result τ² retail session holds about 420."""

RAW_TEXT = "text"
"""Where a result keeps its raw text (`ResultEntry.cache`) for text slots (`bindings_derived`)."""

MAX_RAW_TEXT = 64 * 1024
"""A result keeps at most this many characters of its raw text."""

CALL_RESULT_KEYS = 128
"""Of a result a call's value points to, a served state keeps at most this many key-like values
(τ² results hold at most 43)."""


@dataclass
class ToolState:
    """The tool state x: results (newest last), calls made, the user's words, the last write.

    A served state (`served=True`) keeps only what a decision can use, so its memory is bounded
    whatever the session's length: each tool's newest `look_back` successful results, indexed
    on the flow's `focus` (and their key-like values), no list of every result (`results` stays
    empty), the newest `SERVED_USER_TEXT` characters the user said, at most `SERVED_REMEMBERED`
    calls made since the last write and values passed per argument, at most `SERVED_SEEN`
    key-like values seen or given, and the results of at most `SERVED_CALL_RESULTS` calls passing a value
    (at most `CALL_RESULT_KEYS` key-like values each).
    Its decisions are those of the full state as long as the session stays within those bounds.
    Learning and replay keep the full state (they ask where any earlier value came from).
    """

    manifest: ToolManifest
    look_back: int = LOOK_BACK
    """How many of a tool's newest results a binding source draws on (`bindings_model.BindingOptions`)."""
    served: bool = False
    """Keep only what a decision can use (see above)."""
    focus: Focus | None = None
    """With `served`: the paths of each tool's results decisions read (None: every path)."""
    results: list[ResultEntry] = field(default_factory=list)
    made_keys: set[str] | frozenset[str] = _NOTHING
    """`call_key` of each read made since the last write (read it as `made`; the sets of this
    state start as the one shared empty set and get their own at their first value, `grown`)."""
    unkeyed: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Reads made since the last write whose `call_key` is not made yet: a full state keys them
    only when `made` is asked (learning never asks: a key costs a JSON encoding)."""
    passed_lists: dict[str, set[tuple[str, tuple[str, ...]]]] = field(default_factory=dict)
    user: UserText = field(default_factory=lambda: UserText(filter_from=LEARNING_FILTER_FROM))
    """What the user said, case-folded, ready for mention checks (`user_text.UserText`)."""
    calls_by_tool: dict[str, int] = field(default_factory=dict)
    in_flight: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    writes: int = 0
    position: int = 0
    last_write: int = 0
    """The position of the agent's latest write call (0: none yet)."""
    newest_ok: dict[str, ResultEntry] = field(default_factory=dict)
    """The newest successful visible result of each tool."""
    ok_results: dict[str, list[ResultEntry]] = field(default_factory=dict)
    """Every successful visible result of each tool, oldest first (a served state: the newest
    `look_back`)."""
    seen_values: set[str] | frozenset[str] = _NOTHING
    """Every normalized value a visible result held so far (a served state: the key-like ones,
    all that `given` asks about, of the results that left their tool's window; those of a
    result in a window are read from its index, `_has_seen`)."""
    given: set[str] | frozenset[str] = _NOTHING
    """Key-like values (see `is_keyish`) the agent passed before any visible result held them."""
    result_for: dict[tuple[str, str, str], ResultEntry] = field(default_factory=dict)
    """(tool, argument, normalized value) -> the newest visible result of a call passing it."""
    passed_by_arg: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    """(tool, argument) -> every normalized value the tool was passed for it (`passed`, by argument;
    a served state: a tuple while they are few)."""
    user_version: int = 0
    """Grows whenever the user speaks, so views that depend on the user's words can be cached."""
    watched_words: frozenset[str] = frozenset()
    """Words some rule of the served flow asks about (its intent rules): of each user message,
    those the learner would have counted (`said_words.said_words`) are kept in `words_said`."""
    words_said: set[str] | frozenset[str] = _NOTHING
    """The watched words the user said so far, cut from the message as the learner cut it (never
    forgotten: at most as many as `watched_words`)."""
    user_source: str | None = None
    """Each user message is also a result of `user_words.USER_TOOL` (a binding source), cut into
    values by this mode (`pattern` or `spans`); None: the user's words are no source."""
    keep_text: frozenset[str] | None = None
    """Tools whose results keep their raw text for text slots (`bindings_derived`); None: every
    tool's in a full state (learning, replay), none in a served one."""
    views: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Scratch space for derived views of several results (bindings keep a pool's holders of a
    path here). What refers to a result lives here, never in a result's own `cache`, so that a
    session's state holds no reference cycle and is freed as soon as it is dropped."""

    def __post_init__(self) -> None:
        if self.served:
            self.user = UserText(SERVED_USER_TEXT)

    @property
    def user_words(self) -> list[str]:
        """The user's messages kept, case-folded, oldest first (all of them unless `served`)."""
        return self.user.messages

    def observe_user_message(self, message: UserMessage) -> list[str]:
        """The user spoke and perhaps ran tools of their own (τ² telecom's phone): the words
        remembered, the calls observed as the user's; their call ids."""
        self.observe_user(message.text)
        for call in message.calls:
            self.observe_call(call.call_id, call.tool, call.arguments, by_agent=False)
        return [call.call_id for call in message.calls]

    def watch(self, words: frozenset[str]) -> None:
        """Watch these words too (a state made without its flow's words): the messages already
        kept are read again, case-folded, so a capitalized word said before may count; the
        engine's states are made watching, and read each message as the learner did."""
        new = words - self.watched_words
        if not new:
            return
        self.watched_words = self.watched_words | new
        for message in self.user.messages:
            said = said_words(message) & new
            if said:
                self.words_said = grown(self.words_said)
                self.words_said |= said

    def observe_user(self, text: str) -> None:
        """The user said something: remembered for mention checks (lower-cased)."""
        if text:
            self.user.add(text.casefold())
            self.user_version += 1
            if self.watched_words:
                said = said_words(text) & self.watched_words
                if said:
                    self.words_said = grown(self.words_said)
                    self.words_said |= said
            if self.user_source:
                self._observe_user_words(text, self.user_source)

    def _observe_user_words(self, text: str, mode: str) -> None:
        """The message as a result of the user pseudo-tool (a source; its values are not `seen`)."""
        from stretto_core.sessions.user_words import user_spans

        parsed = user_spans(text, mode)
        if not parsed:
            return
        self.position += 1
        entry = ResultEntry(self.position, USER_TOOL, f"user-{self.user_version}", {}, True,
                            index_result("", parsed), by_agent=False, origin="user")
        self.newest_ok[USER_TOOL] = entry
        window = self.ok_results.setdefault(USER_TOOL, [])
        window.append(entry)
        if not self.served:
            self.results.append(entry)
        elif len(window) > self.look_back:  # a served state keeps the newest messages' results only
            self._forget(window.pop(0))

    def observe_call(self, call_id: str, tool: str, arguments: dict[str, Any], by_agent: bool = True) -> None:
        """A call was made (its result may come later). A write by the agent (or a tool that may be
        one) ends reads' reach."""
        self.position += 1
        self.in_flight[call_id] = (tool, arguments)
        if not by_agent:
            return
        for leaf in argument_leaves(arguments):
            key = _kept_key(leaf)
            if key is not None and is_keyish(key) and not self._has_seen(key):
                self.given = grown(self.given)
                self.given.add(key)
                if self.served:
                    _trim(self.given, SERVED_SEEN)
        self._remember_passed(tool, arguments)
        if not self.manifest.ends_reach(tool):
            return  # a read or a pure tool: what was read still holds
        self.writes += 1
        self.last_write = self.position
        self.made_keys = _NOTHING
        self.unkeyed = []

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
        origin = origin or ("agent" if by_agent else "other")
        if error:
            index: ValueIndex = ValueIndex()
        elif self.served and origin == "other":
            index = ValueIndex()  # an unseen result is no source and shows nothing
        elif self.served and self.focus is not None:
            index = shared_focused(self.focus, tool, content, parsed)
        else:
            index = shared_index(content, parsed)
        entry = ResultEntry(self.position, tool, call_id, args, not error, index, by_agent, origin=origin)
        keep = self.keep_text
        if not error and ((keep is None and not self.served) or (keep and tool in keep)):
            entry.cache[RAW_TEXT] = content[:MAX_RAW_TEXT]
        if not self.served:
            self.results.append(entry)
        if by_agent and self.manifest.is_read(tool):
            self._made(tool, args)
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
        self._made(tool, arguments)
        return self.observe_result(call_id, tool, content, parsed, error, by_agent=False,
                                   arguments=arguments, origin="lookup")

    def _index_visible(self, entry: ResultEntry) -> None:
        if self.served:
            self._keep_visible(entry)
            return
        if entry.ok:
            self.newest_ok[entry.tool] = entry
            self.ok_results.setdefault(entry.tool, []).append(entry)
            if entry.index.first_path:
                self.seen_values = grown(self.seen_values)
                self.seen_values.update(entry.index.first_path)
        for name, value in entry.arguments.items():
            key = normalize(value)
            if key is not None:
                self.result_for[(entry.tool, name, key)] = entry

    def _keep_visible(self, entry: ResultEntry) -> None:
        """`_index_visible` for a served state: the tool's window slides, and a result a call's
        value points to (`result_for`) is kept as its key-like values alone."""
        if entry.ok:
            self.newest_ok[entry.tool] = entry
            window = self.ok_results.setdefault(entry.tool, [])
            window.append(entry)
            if len(window) > self.look_back:
                gone = window.pop(0)
                self._forget(gone)
                self.seen_values = grown(self.seen_values)
                self.seen_values.update(keyish_keys(gone.index))  # no longer read from its window
                _trim(self.seen_values, SERVED_SEEN)
        # The result itself while it sits in its window (a husk is made when it leaves, `_forget`),
        # a husk at once when it never enters one; a failed result's is shared: only `ok` is read.
        kept: ResultEntry | None = entry if _in_window(entry) else None
        for name, value in entry.arguments.items():
            key = _kept_key(value)
            if key is not None:
                if kept is None:
                    kept = _husk(entry) if entry.ok else _FAILED
                self.result_for.pop((entry.tool, name, key), None)
                self.result_for[(entry.tool, name, key)] = kept
        _cap(self.result_for, SERVED_CALL_RESULTS)

    def _forget(self, entry: ResultEntry) -> None:
        """A result left its tool's window: drop the views of several results that hold it, and
        where a call's value still points to it, keep its husk instead."""
        position = entry.position
        for tag in [t for t, v in self.views.items() if _holds_position(t, v, position)]:
            del self.views[tag]
        husk: ResultEntry | None = None
        result_for = self.result_for
        for name, value in entry.arguments.items():
            key = _kept_key(value)
            if key is not None and result_for.get((entry.tool, name, key)) is entry:
                if husk is None:
                    husk = _husk(entry)
                result_for[(entry.tool, name, key)] = husk  # in place: the table's order stays

    def _has_seen(self, key: str) -> bool:
        """Some visible result so far held `key` (a key-like value)."""
        if key in self.seen_values:
            return True
        if not self.served:
            return False
        for tool, window in self.ok_results.items():  # a served state: the windows' own values
            if tool != USER_TOOL:
                for entry in window:
                    if holds_key(entry.index, key):
                        return True
        return False

    def _made(self, tool: str, arguments: dict[str, Any]) -> None:
        if not self.served:
            self.unkeyed.append((tool, arguments))
            return
        self.made_keys = grown(self.made_keys)
        self.made_keys.add(call_key(tool, arguments))
        if len(self.made_keys) > SERVED_REMEMBERED:
            self.made_keys.pop()

    @property
    def made(self) -> set[str] | frozenset[str]:
        """`call_key` of every read made since the last write (do not modify)."""
        if self.unkeyed:
            self.made_keys = grown(self.made_keys)
            self.made_keys.update(call_key(tool, arguments) for tool, arguments in self.unkeyed)
            self.unkeyed = []
        return self.made_keys

    def user_text(self) -> str:
        """Everything the user said (kept), case-folded, one message a line."""
        return self.user.text

    def mentioned_key(self, key: str) -> bool:
        """`mentioned` for a value already normalized."""
        return len(key) >= 3 and self.user.wrote(key)

    @property
    def passed(self) -> dict[str, set[tuple[str, str]]]:
        """Tool -> every (argument, normalized value) it was passed (`passed_by_arg`, by tool)."""
        out: dict[str, set[tuple[str, str]]] = {}
        for (tool, name), keys in self.passed_by_arg.items():
            out.setdefault(tool, set()).update((name, key) for key in keys)
        return out

    def _remember_passed(self, tool: str, arguments: dict[str, Any]) -> None:
        self.calls_by_tool[tool] = self.calls_by_tool.get(tool, 0) + 1
        lists: set[tuple[str, tuple[str, ...]]] | None = None
        for name, value in arguments.items():
            if isinstance(value, (list, tuple)):
                if lists is None:  # a tool passed no list has no set
                    lists = self.passed_lists.setdefault(tool, set())
                lists.add((name, tuple(sorted(filter(None, (normalize(v) for v in value))))))
            key = _kept_key(value)
            if key is not None:
                by_arg = self.passed_by_arg.get((tool, name))
                if self.served and type(by_arg) is not set:  # a new key: the process's one (tool, argument)
                    self._pass_few((tool, name) if by_arg is not None else shared((tool, name)), by_arg, key)
                    continue
                if by_arg is None:
                    by_arg = self.passed_by_arg[(tool, name)] = set()
                by_arg.add(key)
                if self.served and len(by_arg) > SERVED_REMEMBERED:
                    by_arg.pop()
        if self.served and lists is not None and len(lists) > SERVED_REMEMBERED:
            lists.pop()

    def _pass_few(self, tool_arg: tuple[str, str], few: Any, key: str) -> None:
        """A served state keeps the values a tool was passed for an argument as a tuple while
        there are at most `FEW_PASSED` (a set's table costs several times a tuple's), then a set."""
        if few is None:
            self.passed_by_arg[tool_arg] = (key,)  # type: ignore[assignment]
        elif key not in few:
            self.passed_by_arg[tool_arg] = few + (key,) if len(few) < FEW_PASSED else {*few, key}

    def passed_values(self, tool: str, arg: str) -> set[str] | frozenset[str]:
        """The normalized values `tool` was already passed for `arg` (do not modify)."""
        return self.passed_by_arg.get((tool, arg), _NOTHING)

    def already_passed(self, tool: str, arg: str, value: Any) -> bool:
        key = normalize(value)
        return key is not None and key in self.passed_by_arg.get((tool, arg), _NOTHING)

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
        """The user wrote this value (case-insensitive substring of what they said, or its rest
        after a sigil as a whole word: `value_written`)."""
        key = normalize(value)
        if key is None or len(key) < 3:
            return False
        return self.user.wrote(key)

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
        """Every value held by a result received since the agent's latest write."""
        out: set[str] = set()
        for entry in self.results:
            if entry.position > self.last_write:
                out.update(entry.index.first_path)
        return out


def _in_window(entry: ResultEntry) -> bool:
    """A served result a call's value may point to as it is while in its window: successful,
    and its key-like values already kept whole by its focused index (as its husk would keep them)."""
    index = entry.index
    return entry.ok and type(index) is FocusedIndex and len(index.keyish) <= CALL_RESULT_KEYS


def _husk(entry: ResultEntry) -> ResultEntry:
    """What `result_for` keeps of a result out of its window: its key-like values alone."""
    return ResultEntry(entry.position, entry.tool, entry.call_id, NOTHING_HELD, entry.ok,  # type: ignore[arg-type]
                       _husk_index(entry.index), entry.by_agent, origin=entry.origin)  # type: ignore[arg-type]


_FAILED = ResultEntry(0, "", "", NOTHING_HELD, False, KeyishOnly(()), False)  # type: ignore[arg-type]
"""What `result_for` keeps of a failed result (`described_read` reads only that it failed)."""


def _husk_index(index: ValueIndex) -> KeyishOnly:
    """What `described_read` reads of a result a call's value points to: its key-like values (at
    most `CALL_RESULT_KEYS`, the first in sorted order, when it holds more)."""
    keyish = index.keyish if isinstance(index, FocusedIndex) else frozenset(keyish_keys(index))
    if len(keyish) > CALL_RESULT_KEYS:
        keyish = tuple(sorted(keyish)[:CALL_RESULT_KEYS])
    return KeyishOnly(keyish)


def _holds_position(tag: Any, view: Any, position: int) -> bool:
    """A view of several results (`ToolState.views`) that holds the result at `position`."""
    return isinstance(tag, tuple) and len(tag) > 2 and tag[0] == "p" and position in tag[2:]


def _kept_key(value: Any) -> str | None:
    """`normalize(value)`, as the value's own string when it is already normal (a table keeping
    the key then holds no copy of it), else as the one copy of it alive (`sys.intern`: the values
    passed and the results they point to keep one string, not one each)."""
    key = normalize(value)
    return value if key == value else key if key is None else intern(key)


def grown(values: set | frozenset) -> set:
    """`values` itself when it is a set of its own, else a new set of its values (a state's or a
    session's sets start as one shared empty frozenset: an empty set costs 216 bytes, and most
    stay empty in a served session)."""
    return values if type(values) is set else set(values)


def _trim(values: set, size: int) -> None:
    """Forget some values of a set beyond `size`."""
    while len(values) > size:
        values.pop()


def _cap(table: dict, size: int) -> None:
    """Forget the oldest entries of an insertion-ordered table beyond `size`."""
    while len(table) > size:
        del table[next(iter(table))]


def leaves_in_state(state: ToolState, arguments: dict[str, Any]) -> bool:
    """Every argument value of a call sits in a result received since the last write."""
    values = state.values_since_write()
    for leaf in argument_leaves(arguments):
        key = normalize(leaf)
        if key is None or key not in values:
            return False
    return True
