"""A tool result, whatever its format, as values at paths.

Bindings and the read-only ceiling both ask "which earlier result held this value, and where".
Results arrive as JSON (τ²-bench), YAML or Python literals (AgentDojo), LangChain reprs
(WorkBench) or plain text, so each is parsed into a structure first, and then walked into
`(path, value)` pairs in document order.

Paths: `$` is the whole result, `.name` a field, `[*]` any element of a list, and `.*~` the
names of an object's fields (AgentDojo keys its hotel listings by name). Plain text is read as
its lines, `$[*]`, and a `key: value` line also gives its value at `$.key`. A heading list, a
first line `Heading: item` followed by lines that are not `key: value` lines (AgentDojo's
`Hotel Names: A\nB\nC`), is read as the list of its items: every item at `$[*]` (the first
item too, ahead of its `$.Heading` path), so one path holds the whole listing.

Every value also has an address: the position it holds in each list (`[*]`) on its path, so
values of one record (`$.flights[*].date` and `$.flights[*].flight_number` at the same index)
can be told apart from values of another (`ValueIndex.records`, `ValueIndex.paths`).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from stretto_core.sessions.jsonline import loads
from stretto_core.sessions.limits import MAX_DEPTH

MAX_TEXT_LINES = 400
"""Text results longer than this many lines are indexed on their first lines only."""

MAX_LEAVES = 5000
"""A result is indexed on at most this many values, so a huge listing cannot stall a decision."""

MAX_CONTAINERS = 5000
"""A result's walk visits at most this many lists and objects, empty ones included."""

def _yaml_load(text: str) -> Any:
    """YAML, by libyaml's safe loader when present (7.6× faster; identical on all 14,940 YAML
    results ingested); None when it is not YAML. yaml loads here, on the first YAML-looking
    result, not when serving starts."""
    import yaml

    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, RecursionError):
        return None

_KEY_LINE = re.compile(r"^\s*([^:\n]{1,60}):\s+(\S.*?)\s*$")


def parse_result(text: str, parsed: Any = None) -> Any:
    """The structure behind a tool result's text: JSON, then a Python literal, then YAML, else lines.

    `parsed` is used as it is when the recorder already parsed the result.
    """
    if parsed is not None:
        return parsed
    stripped = _unwrap(text.strip())
    if not stripped:
        return None
    head = stripped[0]
    if head in "[{\"" or head.isdigit() or head == "-" or stripped in ("true", "false", "null"):
        try:
            return loads(stripped)
        except (ValueError, RecursionError):
            pass
    if head in "[{('\"" or head.isdigit():
        try:
            return ast.literal_eval(stripped)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            pass
    if "\n" in stripped or ":" in stripped or stripped.startswith("- "):
        loaded = _yaml_load(stripped)
        if isinstance(loaded, (dict, list)):
            return loaded
    return TextResult(stripped)


DELIMITERS = (("<<", ">>"),)
"""Marks a pipeline wraps around a tool's whole result before its agent sees it (AgentDojo's
spotlighting defense writes `<<...>>`). What the tool returned, and a proxy would see, is inside."""


def _unwrap(text: str) -> str:
    for opening, closing in DELIMITERS:
        if text.startswith(opening) and text.endswith(closing) and len(text) >= len(opening) + len(closing):
            return text[len(opening):len(text) - len(closing)].strip()
    return text


@dataclass(frozen=True)
class TextResult:
    """A result that is only text: read as its lines."""

    text: str


def is_scalar(value: Any) -> bool:
    """A string or a number (not a bool): a value an argument binds as one value."""
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def normalize(value: Any) -> str | None:
    """The form two values are compared in: trimmed, case-folded text; numbers without `.0`.

    Returns None for values that can never identify anything (None, empty strings, containers).
    """
    if type(value) is str:  # the common case first; the same as `str(value)` below
        text = value.strip()
        return text.casefold() if text else None
    if value is None or isinstance(value, (dict, list, tuple)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        if value.is_integer():
            return str(int(value))
        return repr(value)
    if isinstance(value, int):
        return str(value)
    text = str(value).strip()
    if not text:
        return None
    return text.casefold()


def walk(structure: Any) -> Iterator[tuple[str, Any]]:
    """Every scalar of a parsed result with its path, in document order."""
    for path, _address, value in walk_addressed(structure):
        yield path, value


def walk_addressed(structure: Any) -> Iterator[tuple[str, tuple[int, ...], Any]]:
    """Every scalar with its path and its address (its index in each `[*]` of the path)."""
    return iter(leaves_addressed(structure))


def leaves_addressed(structure: Any) -> list[tuple[str, tuple[int, ...], Any]]:
    """`walk_addressed` as a list: at most `MAX_LEAVES` (path, address, value), in document order.

    The walk is bounded whatever the structure: it visits at most `MAX_CONTAINERS` containers
    (YAML aliases can make a few hundred bytes stand for millions of them, empty or not) and
    goes at most `MAX_DEPTH` deep; what lies beyond is not indexed.
    """
    out: list[tuple[str, tuple[int, ...], Any]] = []
    _collect(structure, "$", (), out, [MAX_CONTAINERS], 0)
    del out[MAX_LEAVES:]
    return out


_SCALARS = (str, int, float)
_CONTAINERS = (list, tuple, set, frozenset)


def _leaf(value: Any) -> Any:
    """A scalar as it is indexed: JSON's kinds as they are, anything else (a YAML date, bytes) as
    its text, so that a value bound from a result is always one a tool call can carry."""
    return value if isinstance(value, (str, int, float)) else str(value)


def _collect(node: Any, path: str, address: tuple[int, ...], out: list[tuple[str, tuple[int, ...], Any]],
             budget: list[int], depth: int) -> None:
    """Append the scalars under `node` to `out`; stops descending once `out` holds `MAX_LEAVES`,
    once `budget[0]` containers were visited, or below `MAX_DEPTH`."""
    if type(node) in _SCALARS:
        out.append((path, address, node))
        return
    if isinstance(node, (dict, _CONTAINERS)):
        if depth >= MAX_DEPTH or budget[0] <= 0:
            return
        budget[0] -= 1
        if isinstance(node, dict):
            _collect_dict(node, path, address, out, budget, depth + 1)
            return
        child_path = path + "[*]"
        for i, child in enumerate(node):
            if type(child) in _SCALARS:
                out.append((child_path, address + (i,), child))
            else:
                _collect(child, child_path, address + (i,), out, budget, depth + 1)
            if len(out) >= MAX_LEAVES or budget[0] <= 0:
                return
    elif isinstance(node, TextResult):
        out.extend(_walk_text(node.text, path, address))
    elif node is not None:
        out.append((path, address, _leaf(node)))


def _collect_dict(node: dict, path: str, address: tuple[int, ...], out: list[tuple[str, tuple[int, ...], Any]],
                  budget: list[int], depth: int) -> None:
    names = path + ".*~"
    for key in node:
        if isinstance(key, _SCALARS) and not isinstance(key, bool):
            out.append((names, address, key))
            if len(out) >= MAX_LEAVES:
                return
    for key, child in node.items():
        if len(out) >= MAX_LEAVES or budget[0] <= 0:
            return
        if type(child) in _SCALARS:
            out.append((f"{path}.{key}", address, child))
        else:
            _collect(child, f"{path}.{key}", address, out, budget, depth)


def _walk_text(text: str, path: str, address: tuple[int, ...]) -> Iterator[tuple[str, tuple[int, ...], Any]]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) <= 1:
        yield path, address, text.strip()
        match = _KEY_LINE.match(text)
        if match:
            yield f"{path}.{match.group(1).strip()}", address, match.group(2)
        return
    lines = lines[:MAX_TEXT_LINES]
    heading = _KEY_LINE.match(lines[0])
    if heading and not any(_KEY_LINE.match(line) for line in lines[1:]):
        # `Heading: first item` then one item a line: the items are the list.
        yield f"{path}.*~", address, heading.group(1).strip()
        items = [heading.group(2)] + [line.strip() for line in lines[1:]]
        for i, item in enumerate(items):
            yield f"{path}[*]", address + (i,), item
        yield f"{path}.{heading.group(1).strip()}", address, heading.group(2)
        return
    for i, line in enumerate(lines):
        yield f"{path}[*]", address + (i,), line.strip()
        match = _KEY_LINE.match(line)
        if match:
            yield f"{path}.{match.group(1).strip()}", address + (i,), match.group(2)


@dataclass(slots=True)
class ValueIndex:
    """The values of one result: normalized value -> first path holding it, and path -> values."""

    first_path: dict[str, str] = field(default_factory=dict)
    by_path: dict[str, list[Any]] = field(default_factory=dict)
    paths: dict[str, list[str]] = field(default_factory=dict)
    """Normalized value -> every path holding it, in document order."""
    records: dict[str, list[tuple[tuple[int, ...], Any]]] = field(default_factory=dict)
    """Path -> (address, value) of every value at it, in document order, repeats kept."""
    keys: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)
    """Path -> the normalized form of each of its `by_path` values (kept when they were indexed)."""
    views: dict[Any, Any] | None = field(default=None, repr=False, compare=False)
    """Views of the result that depend on this index alone (candidates, addresses, record words,
    `ResultEntry.index_views`): kept here, so every state holding the same result (an index
    shared between sessions, `state._shared_index`) reads them once, not once a session."""

    def holds(self, value: Any) -> bool:
        key = normalize(value)
        return key is not None and key in self.first_path

    def path_of(self, value: Any) -> str | None:
        key = normalize(value)
        return None if key is None else self.first_path.get(key)

    def values_at(self, path: str) -> list[Any]:
        return self.by_path.get(path, [])


DEDUP_IN_LIST = 8
"""A path's distinct values are told apart by comparing them in its list up to this many, then
by a dict (most paths hold one value: a dict per path would cost more than the rest)."""


def index_result(text: str, parsed: Any = None) -> ValueIndex:
    """Index one result's values for lookups by value and by path."""
    structure = parse_result(text, parsed)
    if type(structure) is dict or type(structure) is list:
        leaves: list[tuple[str, tuple[int, ...], Any]] = []
        try:
            _walk_plain(structure, "$", (), 0, leaves, [0])
            return index_leaves(leaves)
        except _Beyond:
            pass
    return index_leaves(leaves_addressed(structure))


class _Beyond(Exception):
    """A structure `_walk_plain` leaves to `leaves_addressed`: not plain JSON, or at a bound."""


def _walk_plain(node: dict | list, path: str, address: tuple[int, ...], depth: int,
                out: list[tuple[str, tuple[int, ...], Any]], containers: list[int]) -> None:
    """`leaves_addressed` of dicts and lists (JSON's, YAML's), appended to `out` in the same order;
    `_Beyond` when the structure holds another kind of container, or reaches the depth or
    containers bound, where `leaves_addressed` would cut it (the caller checks the leaves bound)."""
    containers[0] += 1
    if depth >= MAX_DEPTH or containers[0] >= MAX_CONTAINERS:
        raise _Beyond
    append = out.append
    if type(node) is dict:
        names = path + ".*~"
        for key in node:
            if type(key) is str or (isinstance(key, _SCALARS) and not isinstance(key, bool)):
                append((names, address, key))
        for key, child in node.items():
            kind = type(child)
            if kind is str or kind is int or kind is float or kind is bool:
                append((f"{path}.{key}", address, child))
            elif kind is dict or kind is list:
                _walk_plain(child, f"{path}.{key}", address, depth + 1, out, containers)
            elif child is not None:
                append((f"{path}.{key}", address, _plain_leaf(child)))
    else:
        child_path = path + "[*]"
        for i, child in enumerate(node):
            kind = type(child)
            if kind is str or kind is int or kind is float or kind is bool:
                append((child_path, address + (i,), child))
            elif kind is dict or kind is list:
                _walk_plain(child, child_path, address + (i,), depth + 1, out, containers)
            elif child is not None:
                append((child_path, address + (i,), _plain_leaf(child)))
    if len(out) >= MAX_LEAVES:
        raise _Beyond


def _plain_leaf(value: Any) -> Any:
    """A value that is neither a container nor JSON's, as `_leaf` indexes it (a YAML date: its
    text); `_Beyond` for a container of another kind (a tuple, a set) or a text result."""
    if isinstance(value, (dict, _CONTAINERS, TextResult)):
        raise _Beyond
    return _leaf(value)


def index_leaves(leaves: list[tuple[str, tuple[int, ...], Any]]) -> ValueIndex:
    """The index of (path, address, value) leaves in document order, built in one loop (no call
    per leaf: a learn indexes about 30,000 of them).

    Per path: every (address, value) in `records`; its distinct values in `by_path` (equal values
    are one: 1, 1.0 and True), told apart in its list up to `DEDUP_IN_LIST` of them, then by a dict
    (most paths hold one value), and their normalized forms in `keys`. Per normalized value: the
    paths holding it, in document order (`paths`), and the first (`first_path`).
    """
    idx = ValueIndex()
    first_path, paths, records, by_path, keys = idx.first_path, idx.paths, idx.records, idx.by_path, idx.keys
    distinct_at: dict[str, dict[Any, None] | bool] = {}
    """Path -> its distinct values as a dict, once it holds `DEDUP_IN_LIST` (False when they
    cannot be hashed: compared in the list)."""
    paths_get, records_get, distinct_get = paths.get, records.get, distinct_at.get
    for path, address, value in leaves:
        kind = type(value)
        if kind is str:
            key = value.strip()
            if not key:
                continue
            key = key.casefold()
        elif kind is int:
            key = str(value)
        else:
            key = normalize(value)
            if key is None:
                continue
        record = records_get(path)
        if record is None:
            records[path] = [(address, value)]
            by_path[path] = [value]
            keys[path] = [key]
        else:
            record.append((address, value))
            distinct = distinct_get(path)
            if distinct:
                if value not in distinct:  # type: ignore[operator]
                    distinct[value] = None  # type: ignore[index]
                    by_path[path].append(value)
                    keys[path].append(key)
            else:
                values = by_path[path]
                if value not in values:
                    values.append(value)
                    keys[path].append(key)
                    if distinct is None and len(values) >= DEDUP_IN_LIST:
                        try:
                            distinct_at[path] = dict.fromkeys(values)
                        except TypeError:
                            distinct_at[path] = False
        where = paths_get(key)
        if where is None:
            paths[key] = [path]
            first_path[key] = path
        elif path not in where:
            where.append(path)
    return idx


def argument_leaves(arguments: dict[str, Any]) -> list[Any]:
    """Every scalar an argument set passes (list elements one by one), down to `MAX_DEPTH`."""
    out: list[Any] = []
    for value in arguments.values():
        _leaves(value, out, 0)
    return out


def _leaves(value: Any, out: list[Any], depth: int) -> None:
    if isinstance(value, dict):
        if depth < MAX_DEPTH:
            for v in value.values():
                _leaves(v, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        if depth < MAX_DEPTH:
            for v in value:
                _leaves(v, out, depth + 1)
    else:
        out.append(value)
