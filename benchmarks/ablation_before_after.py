"""Two `stretto ablate --json` outputs side by side: each domain's and variant's row, before ⇒ after.

    python benchmarks/ablation_before_after.py BEFORE.json AFTER.json [--variants full,simple,next] [--json OUT]

Prints one Markdown table (share of the read-only ceiling and detours per episode with their
95% intervals over tasks, turns saved and detours counted, the score's ECE), and with --json
writes the pairs. Rows only one side has are shown with a dash on the other.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def _rows(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["domain"], r["variant"]): r for r in json.loads(path.read_text(encoding="utf-8"))}


def _interval(m: dict[str, float], scale: float, digits: int) -> str:
    return f"{m['point'] * scale:.{digits}f} [{m['low'] * scale:.{digits}f}, {m['high'] * scale:.{digits}f}]"


def _cell(row: dict[str, Any] | None) -> list[str]:
    if row is None:
        return ["–"] * 4
    m = row["metrics"]
    ece = "–" if row.get("ece") is None else f"{row['ece']:.3f}"
    return [_interval(m["ceiling_share"], 100, 1) + "%", _interval(m["detours_per_episode"], 1, 2),
            f"{m['saved']} / {m['detours']}", ece]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--variants", default="full,simple,next")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    before, after = _rows(args.before), _rows(args.after)
    wanted = [v.strip() for v in args.variants.split(",") if v.strip()]
    keys = sorted({k for k in (*before, *after) if k[1] in wanted}, key=lambda k: (k[0], wanted.index(k[1])))
    head = ["Domain", "Variant", "Share of ceiling", "Detours / ep.", "Saved / detours", "ECE"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    pairs = []
    for domain, name in keys:
        b, a = before.get((domain, name)), after.get((domain, name))
        cells = [x if x == y else f"{x} ⇒ {y}" for x, y in zip(_cell(b), _cell(a))]
        lines.append(f"| {domain} | {name} | " + " | ".join(cells) + " |")
        pairs.append({"domain": domain, "variant": name, "before": b, "after": a})
    print("\n".join(lines))
    if args.json is not None:
        args.json.write_text(json.dumps(pairs, indent=1), encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
