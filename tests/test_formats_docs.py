"""Every field of every file format is documented in docs/formats.md, in inline code.

Add a model to DOCUMENTED_MODELS when it becomes part of a file format; the models it nests
(through lists, dicts, unions and optionals) and the values of enums it uses are checked too.
"""

from __future__ import annotations

import re
import typing
from enum import Enum
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel

from stretto_core.flow.history import LogEntry
from stretto_core.flow.ir import Flow
from stretto_core.evaluate.replay.rows import ReplayResult
from stretto_core.sessions.manifest import InputContract, ToolKind, ToolManifest, ToolSpec
from stretto_core.sessions.model import (Lookup, LLMTurn, Session, SessionHeader, ShadowLookup, ToolCall, ToolResult, Usage,
                                        UserMessage)

FORMATS_DOC = Path(__file__).resolve().parent.parent / "docs" / "formats.md"

DOCUMENTED_MODELS: list[type[BaseModel]] = [
    SessionHeader, UserMessage, LLMTurn, ToolResult, Lookup, ShadowLookup, ToolCall, Usage, Session,
    ToolManifest, ToolSpec, InputContract,
    Flow, ReplayResult, LogEntry,
]
DOCUMENTED_ENUMS: list[type[Enum]] = [ToolKind]


def inline_code_words(markdown: str) -> set[str]:
    """Every identifier inside an inline code span (fenced blocks are not inline code)."""
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    spans = re.findall(r"`([^`\n]+)`", prose)
    return {word for span in spans for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", span)}


def nested_types(annotation: Any) -> Iterator[type]:
    """The classes inside a type annotation: `list[Usage] | None` gives Usage and NoneType."""
    args = typing.get_args(annotation)
    if args:
        for arg in args:
            yield from nested_types(arg)
    elif isinstance(annotation, type):
        yield annotation


def walk(models: list[type[BaseModel]]) -> tuple[list[tuple[str, str]], set[type[Enum]]]:
    """(model, field) for every field of the models and the models they nest; and the enums used."""
    fields: list[tuple[str, str]] = []
    enums: set[type[Enum]] = set()
    seen: set[type] = set()
    todo = list(models)
    while todo:
        model = todo.pop(0)
        if model in seen:
            continue
        seen.add(model)
        for name, info in model.model_fields.items():
            fields.append((model.__name__, name))
            for inner in nested_types(info.annotation):
                if issubclass(inner, BaseModel):
                    todo.append(inner)
                elif issubclass(inner, Enum):
                    enums.add(inner)
    return fields, enums


def undocumented(models: list[type[BaseModel]], enums: list[type[Enum]], markdown: str) -> list[str]:
    words = inline_code_words(markdown)
    fields, used_enums = walk(models)
    missing = [f"{model}.{name}" for model, name in fields if name not in words]
    for enum in sorted(set(enums) | used_enums, key=lambda e: e.__name__):
        missing += [f"{enum.__name__}.{m.value}" for m in enum if str(m.value) not in words]
    return missing


def test_every_field_of_every_format_model_appears_in_inline_code_in_the_formats_doc() -> None:
    missing = undocumented(DOCUMENTED_MODELS, DOCUMENTED_ENUMS, FORMATS_DOC.read_text())
    assert missing == [], f"document these in {FORMATS_DOC.name}, in `inline code`: {', '.join(missing)}"


def test_the_walk_finds_fields_of_nested_models_and_enum_values() -> None:
    fields, enums = walk([SessionHeader])
    assert ("ToolSpec", "contract") in fields and ("InputContract", "required") in fields
    assert enums == {ToolKind}


def test_a_field_missing_from_the_doc_is_named() -> None:
    class Extra(BaseModel):
        documented: int
        forgotten_field: Usage | None = None

    doc = ("`documented` and the usage fields `input_tokens`, `output_tokens`, `cost`, `cache_read_input_tokens`, "
           "`cache_creation_input_tokens`.\n```\nforgotten_field\n```")
    assert undocumented([Extra], [], doc) == ["Extra.forgotten_field"]
