"""Bindings by provenance: where an argument's value came from, and binding it again at run time.

A value an agent passed came from somewhere it could see: a path of an earlier result (in a list
of records, the record whose fields set it apart: the one whose `phone_number` is the ticket's,
or whose `status` is `Overdue`), the shape it had in the ticket (`\\d{3}-\\d{3}-\\d{4}`), or
nowhere (a constant). `candidates` lists every provenance that explains one value; `bind` gives,
in a new run, the values a provenance offers, in the order the run should try them (newest
result first, document order within it).
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from stretto_core.procedures.ir import Binding, Selector
from stretto_core.procedures.state import RunState


def leaves(obj: Any, path: str = "$", record: Any = None, rpath: str = "$") -> Iterator[tuple[str, Any, Any, str]]:
    """(general path, value, record, record's general path) for every scalar of a JSON value.

    The record is the innermost object that is an element of a list, else the whole result.
    """
    if record is None:
        record = obj
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from leaves(value, f"{path}.{key}", record, rpath)
    elif isinstance(obj, list):
        for element in obj:
            inner = f"{path}[*]"
            if isinstance(element, dict):
                yield from leaves(element, inner, element, inner)
            else:
                yield from leaves(element, inner, record, rpath)
    else:
        yield path, obj, record, rpath


def same(a: Any, b: Any) -> bool:
    """Values equal as an agent would pass them: `2.0` and `"2.0"` are the same value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b or (isinstance(a, (str, int, float)) and isinstance(b, (str, int, float)) and str(a) == str(b))


def shape(value: Any) -> str:
    """A regular expression of the value's shape: digit runs generalized, the rest literal."""
    text = str(value)
    parts: list[str] = []
    for match in re.finditer(r"\d+|[^\d]+", text):
        chunk = match.group(0)
        parts.append(rf"\d{{{len(chunk)}}}" if chunk.isdigit() else re.escape(chunk))
    return r"(?<![\w.])" + "".join(parts) + r"(?![\w]|\.\d)"


def ticket_matches(pattern: str, ticket: str) -> list[str]:
    try:
        return [m.group(0) for m in re.finditer(pattern, ticket)]
    except re.error:
        return []


def _cast_of(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    return "int" if isinstance(value, int) else "float" if isinstance(value, float) else None


def _cast(text: str, cast: str | None) -> Any:
    try:
        return int(text) if cast == "int" else float(text) if cast == "float" else text
    except ValueError:
        return None


def _selector_for(value: Any, ticket: str) -> Selector:
    if isinstance(value, str) and any(c.isdigit() for c in value) and value in ticket:
        pattern = shape(value)
        matches = ticket_matches(pattern, ticket)
        if value in matches:
            return Selector(kind="ticket", pattern=pattern, occurrence=matches.index(value))
    return Selector(kind="const", value=value)


def _selector_value(selector: Selector, state: RunState) -> Any:
    if selector.kind == "const":
        return selector.value
    matches = ticket_matches(selector.pattern or "", state.ticket)
    return matches[selector.occurrence] if selector.occurrence < len(matches) else None


def _relative(path: str, rpath: str) -> str:
    return path[len(rpath) + 1:] if path.startswith(rpath + ".") else ""


def _record_field(record: Any, field: str) -> Any:
    node = record
    for part in field.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _record_scalars(record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        return {}
    return {k: v for k, v in record.items() if v is None or isinstance(v, (str, int, float, bool))}


def candidates(value: Any, state: RunState) -> list[Binding]:
    """Every provenance that explains `value` in this state: result paths (with and without the
    selectors that set its record apart), the ticket's shape, and the constant."""
    found: list[Binding] = []
    seen: set[str] = set()

    def add(binding: Binding) -> None:
        key = binding.model_dump_json()
        if key not in seen:
            seen.add(key)
            found.append(binding)

    cast = _cast_of(value)
    for step in reversed(state.steps):
        if step.parsed is None:
            continue
        for path, leaf, record, rpath in leaves(step.parsed):
            if not same(leaf, value) or isinstance(leaf, bool) or leaf is None:
                continue
            add(Binding(kind="result", tool=step.tool, path=path, cast=cast if isinstance(leaf, str) else None))
            own = _relative(path, rpath)
            rivals = [r for s in state.steps if s.tool == step.tool and s.parsed is not None
                      for p, v, r, rp in leaves(s.parsed) if p == path and not same(v, value)]
            if not rivals:
                continue
            for name, mine in _record_scalars(record).items():
                if name == own or mine is None:
                    continue
                if all(not same(_record_field(r, name), mine) for r in rivals):
                    add(Binding(kind="result", tool=step.tool, path=path,
                                where={name: _selector_for(mine, state.ticket)},
                                cast=cast if isinstance(leaf, str) else None))
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and len(str(value)) >= 1:
        text = str(value)
        if any(c.isdigit() for c in text) and text in state.ticket:
            pattern = shape(value)
            matches = ticket_matches(pattern, state.ticket)
            if text in matches:
                add(Binding(kind="ticket", pattern=pattern, occurrence=matches.index(text), cast=cast))
    add(Binding(kind="const", value=value))
    return found


def bind(binding: Binding, state: RunState) -> list[Any]:
    """The values a binding offers in this state, in the order to try them (may be empty)."""
    if binding.kind in ("const", "text"):
        return [binding.value]
    if binding.kind == "ticket":
        matches = ticket_matches(binding.pattern or "", state.ticket)
        if binding.occurrence >= len(matches):
            return []
        value = _cast(matches[binding.occurrence], binding.cast)
        return [] if value is None else [value]
    wanted = {name: _selector_value(sel, state) for name, sel in binding.where.items()}
    if any(v is None for v in wanted.values()):
        return []
    out: list[Any] = []
    for step in reversed(state.steps):
        if step.tool != binding.tool or step.parsed is None:
            continue
        for path, leaf, record, _ in leaves(step.parsed):
            if path != binding.path or leaf is None:
                continue
            if all(same(_record_field(record, name), v) for name, v in wanted.items()):
                value = leaf if binding.cast is None or not isinstance(leaf, str) else _cast(leaf, binding.cast)
                if value is not None and not any(same(value, o) and type(value) is type(o) for o in out):
                    out.append(value)
    return out


def describe(binding: Binding) -> str:
    """A binding as one short line: `@get_customer_by_phone$.line_ids[*]`, `ticket/\\d{3}…/`."""
    if binding.kind == "const":
        return repr(binding.value) if not isinstance(binding.value, str) else f'"{binding.value}"'
    if binding.kind == "text":
        return f'text "{binding.value}"'
    if binding.kind == "ticket":
        nth = f"#{binding.occurrence}" if binding.occurrence else ""
        return f"ticket/{_readable(binding.pattern or '')}/{nth}"
    where = ""
    if binding.where:
        parts = []
        for name, sel in sorted(binding.where.items()):
            source = (f"ticket/{_readable(sel.pattern or '')}/" if sel.kind == "ticket"
                      else (f'"{sel.value}"' if isinstance(sel.value, str) else repr(sel.value)))
            parts.append(f"{name}={source}")
        where = "?{" + ", ".join(parts) + "}"
    return f"@{binding.tool}{binding.path}{where}"


def _readable(pattern: str) -> str:
    return pattern.replace(r"(?<![\w.])", "").replace(r"(?![\w]|\.\d)", "")
