"""Rows out: every measurement prints a Markdown table and can write the same rows as JSON.

Each verb defines its rows as pydantic models (the JSON is their dump, so a number printed is a
number on disk) and renders the table from a few chosen columns. Nothing here knows what a row
means.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from pydantic import BaseModel

from stretto_core.sessions.jsonfile import write_text_file

Cell = Callable[[Any], str]


def pct(share: float | None, digits: int = 1) -> str:
    """A share in [0, 1] as a percentage, `34.2%`; `–` when there is none."""
    return "–" if share is None else f"{100 * share:.{digits}f}%"


def pct_range(share: float | None, low: float | None, high: float | None, digits: int = 1) -> str:
    """A pooled share with its range across groups, `34.2% [29–41]` (the range in whole points)."""
    if share is None:
        return "–"
    if low is None or high is None:
        return pct(share, digits)
    return f"{pct(share, digits)} [{100 * low:.0f}–{100 * high:.0f}]"


def count(n: int | None) -> str:
    """An integer with thousands separated, `14,106`."""
    return "–" if n is None else f"{n:,}"


def markdown_table(rows: Sequence[BaseModel | Mapping[str, Any]], columns: Mapping[str, str | Cell],
                   right: Sequence[str] = ()) -> str:
    """A Markdown table: `columns` maps each header to a row field, or to a function of the row.

    Headers named in `right` are right-aligned (numbers). Cells are padded so the text lines up.
    """
    headers = list(columns)
    body = [[_cell(row, columns[h]) for h in headers] for row in rows]
    widths = [max([len(h)] + [len(line[i]) for line in body]) for i, h in enumerate(headers)]
    aligned = set(right)

    def line(cells: list[str]) -> str:
        padded = [c.rjust(w) if h in aligned else c.ljust(w) for c, w, h in zip(cells, widths, headers)]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if h in aligned else "-" * (w + 2)
                          for w, h in zip(widths, headers)) + "|"
    return "\n".join([line(headers), rule] + [line(cells) for cells in body])


def _cell(row: BaseModel | Mapping[str, Any], column: str | Cell) -> str:
    if callable(column):
        return str(column(row))
    value = getattr(row, column) if isinstance(row, BaseModel) else row.get(column)
    if value is None:
        return "–"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def rows_json(rows: Sequence[BaseModel] | BaseModel) -> Any:
    """Rows (or one model holding them) as plain JSON data."""
    if isinstance(rows, BaseModel):
        return rows.model_dump(mode="json")
    return [row.model_dump(mode="json") for row in rows]


def write_json(rows: Sequence[BaseModel] | BaseModel, path: str | Path) -> Path:
    """Write rows (or one model holding them) as indented JSON (its folder made when missing)."""
    return write_text_file(path, json.dumps(rows_json(rows), indent=1, ensure_ascii=False) + "\n", "JSON rows")
