"""Every field of the procedure IR, and every value its `kind` fields take, is in docs/procedures.md."""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel

from stretto_core.procedures.ir import Procedure

DOC = Path(__file__).resolve().parent.parent / "docs" / "procedures.md"


def inline_code_words(markdown: str) -> set[str]:
    """Identifiers inside inline code spans (fenced blocks do not count)."""
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    return {w for span in re.findall(r"`([^`\n]+)`", prose) for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", span)}


def inner_types(annotation: Any) -> Iterator[Any]:
    """Classes and literal values inside an annotation (through lists, dicts, unions, optionals)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        yield from (("literal", v) for v in typing.get_args(annotation))
        return
    args = typing.get_args(annotation)
    if args:
        for arg in args:
            yield from inner_types(arg)
    elif isinstance(annotation, type):
        yield annotation


def ir_names(model: type[BaseModel]) -> list[str]:
    """`Model.field` for every field of the IR, and `Model.field=value` for every literal value."""
    names, seen, todo = [], set(), [model]
    while todo:
        current = todo.pop(0)
        if current in seen:
            continue
        seen.add(current)
        for name, info in current.model_fields.items():
            names.append(f"{current.__name__}.{name}")
            for inner in inner_types(info.annotation):
                if isinstance(inner, tuple):
                    names.append(f"{current.__name__}.{name}={inner[1]}")
                elif isinstance(inner, type) and issubclass(inner, BaseModel):
                    todo.append(inner)
    return names


def inline_spans(markdown: str) -> list[str]:
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    return re.findall(r"`([^`\n]+)`", prose)


def undocumented(markdown: str) -> list[str]:
    """IR names missing from inline code (a literal that is not an identifier: inside a span)."""
    words, spans = inline_code_words(markdown), inline_spans(markdown)
    missing = []
    for name in ir_names(Procedure):
        token = name.split("=", 1)[1] if "=" in name else name.split(".", 1)[1]
        if token not in words and not (not token.isidentifier() and any(token in s for s in spans)):
            missing.append(name)
    return missing


def test_every_field_and_kind_of_the_procedure_ir_is_documented_in_inline_code():
    missing = undocumented(DOC.read_text(encoding="utf-8"))
    assert missing == [], f"document these in {DOC.name}, in `inline code`: {', '.join(missing)}"


def test_the_walk_reaches_nested_models_and_literal_values():
    names = ir_names(Procedure)
    assert "Selector.occurrence" in names and "Binding.kind=ticket" in names and "Leaf.kind=leaf" in names
    assert "Procedure.stretto_procedure=1" in names


def test_a_forgotten_field_is_named():
    doc = DOC.read_text(encoding="utf-8").replace("`occurrence`", "occurrence")
    assert "Selector.occurrence" in undocumented(doc) and "Binding.occurrence" in undocumented(doc)
