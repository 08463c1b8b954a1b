"""One tuple per distinct small address, shared by every result and session of the process.

A result's index keeps, per value at a focus path, the address of the list element holding it
(`(3,)`, `(0, 2)`), and its views keep, per value, the tuple of its addresses (most often one:
`((3,),)`). Each result builds these afresh, though the same few (the first elements of a
list) recur in every result: a served session held about 40 of them per retail session. Shared,
an address costs a pointer. Tuples are never changed, so sharing changes no answer.
"""

from __future__ import annotations

from typing import Any, Hashable, TypeVar

T = TypeVar("T", bound=tuple)
K = TypeVar("K", bound=Hashable)

MAX_SHARED = 4096
"""At most this many distinct tuples are kept (beyond, a tuple is used as it is, not kept)."""

MAX_LENGTH = 32
"""Only tuples of at most this many items are shared: the table then holds at most about
4096 × 0.3 KB ≈ 1.2 MB per process (chosen by that arithmetic, not tuned on any split)."""

_shared: dict[tuple, tuple] = {}


def shared(value: T) -> T:
    """The process's one copy of `value` (itself the first time, when longer than `MAX_LENGTH`,
    or once `MAX_SHARED` are kept)."""
    if len(value) > MAX_LENGTH:
        return value
    got = _shared.get(value)
    if got is not None:
        return got  # type: ignore[return-value]
    if len(_shared) < MAX_SHARED:
        _shared[value] = value
    return value


def frozen(table: dict[K, list[Any]]) -> dict[K, tuple[Any, ...]]:
    """Each list of `table` as a tuple, a list of one item as the process's one tuple of it
    (`shared` of each, in one pass: views of a result make one per value)."""
    kept = _shared
    out: dict[K, tuple[Any, ...]] = {}
    for key, items in table.items():
        if len(items) == 1:
            one = (items[0],)
            got = kept.get(one)
            if got is None:
                got = one
                if len(kept) < MAX_SHARED:
                    kept[one] = one
            out[key] = got
        else:
            out[key] = tuple(items)
    return out


def shared_count() -> int:
    """How many distinct tuples are kept (tests; a bounded table)."""
    return len(_shared)
