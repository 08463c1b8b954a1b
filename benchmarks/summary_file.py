"""Where a benchmark's numbers go: one JSON file, its folder made, its path printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_summary(path: str | Path, summary: Any) -> Path:
    """Write `summary` as indented JSON to `path` and say where."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"wrote {out}")
    return out
