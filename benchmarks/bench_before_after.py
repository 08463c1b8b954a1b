"""One table of two `stretto bench` reports, before → after: each cell that changed shows both.

    python benchmarks/bench_before_after.py BEFORE/README.md AFTER/README.md "(Table 3)" "(Table 3b)" "(Table 2)"

Each argument after the two reports picks the first table under the heading that contains it
(docs/results.md works as a report too). Rows are matched by their group (carried down where a
row leaves it blank), and by the next cell too where a group has several rows; a cell the same
on both sides is printed once, a changed one as `before ⇒ after`.
"""

from __future__ import annotations

import sys
from pathlib import Path

def table_under(text: str, heading: str) -> list[list[str]]:
    """The first Markdown table after the first heading line containing `heading`, as rows of cells."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("#") and heading in line), None)
    if start is None:
        raise SystemExit(f"no heading containing {heading!r}")
    rows: list[list[str]] = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows or line.startswith("#"):
            break
    return [r for r in rows if not all(set(c) <= set("-: ") for c in r)]


def keyed(rows: list[list[str]]) -> tuple[dict[tuple[str, ...], list[str]], int]:
    """Rows by their key, and how many leading cells the key is (1, or 2 where groups repeat)."""
    groups, group = [], ""
    for row in rows[1:]:
        group = row[0] or group
        groups.append(group)
    width = 1 if len(set(groups)) == len(groups) else 2
    return {(g, *row[1:width]): row for g, row in zip(groups, rows[1:])}, width


def merged(before: list[list[str]], after: list[list[str]]) -> list[str]:
    head = after[0]
    (old, _), (new, width) = keyed(before), keyed(after)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, row in new.items():
        was = old.get(key, ["–"] * len(row))
        cells = [*key, *(a if a == b else f"{b} ⇒ {a}" for b, a in zip(was[width:], row[width:]))]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    before, after = (Path(p).read_text(encoding="utf-8") for p in sys.argv[1:3])
    for heading in sys.argv[3:]:
        print(f"{heading}\n")
        print("\n".join(merged(table_under(before, heading), table_under(after, heading))) + "\n")


if __name__ == "__main__":
    main()
