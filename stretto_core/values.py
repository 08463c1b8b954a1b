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
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

import yaml

MAX_TEXT_LINES = 400
"""Text results longer than this many lines are indexed on their first lines only."""

MAX_LEAVES = 5000
"""A result is indexed on at most this many values, so a huge listing cannot stall a decision."""

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
            return json.loads(stripped)
        except (ValueError, RecursionError):
            pass
    if head in "[{('\"" or head.isdigit():
        try:
            return ast.literal_eval(stripped)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            pass
    if "\n" in stripped or ":" in stripped or stripped.startswith("- "):
        try:
            loaded = yaml.safe_load(stripped)
        except yaml.YAMLError:
            loaded = None
        except RecursionError:
            loaded = None
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


def normalize(value: Any) -> str | None:
    """The form two values are compared in: trimmed, case-folded text; numbers without `.0`.

    Returns None for values that can never identify anything (None, empty strings, containers).
    """
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
    count = 0
    for path, address, value in _walk(structure, "$", ()):
        yield path, address, value
        count += 1
        if count >= MAX_LEAVES:
            return


def _walk(node: Any, path: str, address: tuple[int, ...]) -> Iterator[tuple[str, tuple[int, ...], Any]]:
    if isinstance(node, TextResult):
        yield from _walk_text(node.text, path, address)
    elif isinstance(node, dict):
        for key in node:
            if isinstance(key, (str, int, float)) and not isinstance(key, bool):
                yield f"{path}.*~", address, key
        for key, child in node.items():
            yield from _walk(child, f"{path}.{key}", address)
    elif isinstance(node, (list, tuple, set, frozenset)):
        for i, child in enumerate(node):
            yield from _walk(child, f"{path}[*]", address + (i,))
    elif node is not None:
        yield path, address, node


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


@dataclass
class ValueIndex:
    """The values of one result: normalized value -> first path holding it, and path -> values."""

    first_path: dict[str, str] = field(default_factory=dict)
    by_path: dict[str, list[Any]] = field(default_factory=dict)
    paths: dict[str, list[str]] = field(default_factory=dict)
    """Normalized value -> every path holding it, in document order."""
    records: dict[str, list[tuple[tuple[int, ...], Any]]] = field(default_factory=dict)
    """Path -> (address, value) of every value at it, in document order, repeats kept."""

    def holds(self, value: Any) -> bool:
        key = normalize(value)
        return key is not None and key in self.first_path

    def path_of(self, value: Any) -> str | None:
        key = normalize(value)
        return None if key is None else self.first_path.get(key)

    def values_at(self, path: str) -> list[Any]:
        return self.by_path.get(path, [])


def index_result(text: str, parsed: Any = None) -> ValueIndex:
    """Index one result's values for lookups by value and by path."""
    idx = ValueIndex()
    for path, address, value in walk_addressed(parse_result(text, parsed)):
        key = normalize(value)
        if key is None:
            continue
        idx.first_path.setdefault(key, path)
        bucket = idx.by_path.setdefault(path, [])
        if value not in bucket:
            bucket.append(value)
        where = idx.paths.setdefault(key, [])
        if path not in where:
            where.append(path)
        idx.records.setdefault(path, []).append((address, value))
    return idx


def argument_leaves(arguments: dict[str, Any]) -> list[Any]:
    """Every scalar an argument set passes (list elements one by one)."""
    out: list[Any] = []
    for value in arguments.values():
        _leaves(value, out)
    return out


def _leaves(value: Any, out: list[Any]) -> None:
    if isinstance(value, dict):
        for v in value.values():
            _leaves(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _leaves(v, out)
    else:
        out.append(value)
