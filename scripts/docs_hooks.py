"""MkDocs hook: each adapter page's options table, generated from the code when the site builds.

A page that holds the marker

    <!-- stretto:options stretto_adk:StrettoPlugin -->

gets, in its place, a table of every keyword that callable takes: its own keywords and the keys
of its typed `**options` (`Unpack[...]`), each with its type, its default and what it does (the
core's field docstring for a shared option, else the callable's own docstring line naming it).
So the page cannot miss an option the code has; `tests/test_docs_site.py` checks it does not.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for root in (REPO, REPO / "adapters"):
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))

MARKER = re.compile(r"<!-- stretto:options (\S+):(\S+) -->")
SKIP = {"self", "agent"}
"""Positional subjects, not options (`instrument(agent, ...)`)."""


def target_of(entry: str) -> Any:
    """The callable `package:Name` names (a class: its constructor)."""
    package, name = entry.split(":")
    found = getattr(importlib.import_module(package), name)
    return found.__init__ if inspect.isclass(found) else found


def options_of(entry: str) -> list[tuple[str, str, str]]:
    """(name, type, default) of every keyword the callable takes, in signature order, then the
    keys of its typed `**options`."""
    function = target_of(entry)
    module = vars(importlib.import_module(function.__module__))
    rows: list[tuple[str, str, str]] = []
    for name, parameter in inspect.signature(function).parameters.items():
        if name in SKIP:
            continue
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            typed = str(parameter.annotation).removeprefix("Unpack[").removesuffix("]")
            for key, kind in module[typed].__annotations__.items():
                field = next((m.model_fields[key] for m in _models(entry.split(":")[0]) if key in m.model_fields),
                             None)
                default = "" if field is None else repr(field.default)
                rows.append((key, _type_text(kind), default))
            continue
        default = "" if parameter.default is inspect.Parameter.empty else repr(parameter.default)
        rows.append((name, _type_text(parameter.annotation), default))
    return rows


def _type_text(annotation: Any) -> str:
    annotation = getattr(annotation, "__forward_arg__", annotation)
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    text = re.sub(r"typing\.|collections\.abc\.|pathlib\.|stretto_core\.[\w.]+\.", "", str(text))
    return text.removeprefix("Optional[").removesuffix("]") + " | None" if text.startswith("Optional[") else text


def described(entry: str, name: str) -> str:
    """What an option does: the core's field docstring, else the callable's docstring line naming it."""
    from stretto_core.serve.options import StrettoOptions

    function = target_of(entry)
    doc = inspect.cleandoc(function.__doc__ or "")  # its own, not an inherited `object.__init__`'s
    package, owner = entry.split(":")
    klass = getattr(importlib.import_module(package), owner)
    doc = "\n".join(d for d in (inspect.cleandoc(klass.__doc__ or ""), doc) if d) if klass is not function else doc
    own = _line_naming(doc, name)
    if own:
        return own
    for model in _models(package):
        field = model.model_fields.get(name)
        if field is not None and field.description:
            return " ".join(field.description.split())
    return "See the signature."


def _models(package: str) -> list[Any]:
    """The options models an option's docstring may live in: the adapter's own, then the core's."""
    from stretto_core.serve.options import StrettoOptions

    own = getattr(importlib.import_module(package), "StrettoOptions", None)
    return [m for m in (own, StrettoOptions) if m is not None]


def _line_naming(doc: str, name: str) -> str:
    """The sentence of a docstring that introduces `name` (`name:` or `` `name` ``), if any."""
    paragraphs = re.split(r"\n\s*\n|\n(?=\s*[`\w/ *]+:\s)", doc)
    for text in paragraphs:
        flat = " ".join(text.split())
        if re.match(rf"^(`?{re.escape(name)}`?(\s*/\s*`?\w+`?)*\s*[:=])", flat):
            return flat.split(":", 1)[1].strip() if ":" in flat else flat
    return ""


def options_table(entry: str) -> str:
    """The Markdown table of one callable's options."""
    lines = ["| option | type | default | what it does |", "|---|---|---|---|"]
    for name, kind, default in options_of(entry):
        text = described(entry, name).replace("|", "\\|")
        lines.append(f"| `{name}` | `{kind}` | {f'`{default}`' if default else ''} | {text} |")
    return "\n".join(lines) + "\n"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs' page hook: every options marker replaced by its table."""
    return MARKER.sub(lambda m: options_table(f"{m.group(1)}:{m.group(2)}"), markdown)
