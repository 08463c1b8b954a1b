"""Progress bars for long verbs: on a terminal only, quiet when output goes to a file or a pipe.

`track(items, "learn")` wraps an iterable in a tqdm bar on stderr when stderr is a terminal
(and `STRETTO_PROGRESS` is not `0`); otherwise it returns the iterable untouched, so library
calls, tests and logs see no bar. tqdm loads only when a bar is shown.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")


def showing() -> bool:
    """Whether bars are shown: stderr is a terminal and STRETTO_PROGRESS is not 0."""
    if os.environ.get("STRETTO_PROGRESS", "") == "0":
        return False
    stream = sys.stderr
    return bool(getattr(stream, "isatty", None)) and stream.isatty()


def track(items: Iterable[T], desc: str, total: int | None = None, unit: str = "it") -> Iterable[T]:
    """`items`, with a progress bar on a terminal."""
    if not showing():
        return items
    from tqdm import tqdm

    return _bar(tqdm(items, desc=desc, total=total, unit=unit, leave=False, dynamic_ncols=True))


def _bar(bar: Iterable[T]) -> Iterator[T]:
    yield from bar
