"""What a served session forgets when the user speaks: the namings derived for their earlier words.

A decision caches, on each result it reads, which of its values the user named, per
`user_version` (`learn/bindings/mention.py`: a path's `named_view`, its naming context, the
record words hit, the pool's word frequencies, whether a read holds a value the user gave), and
on the pool's holders the picks that naming led to (`pick.Holders`). Once the user speaks again
none of them is read: each is made afresh at its next use, for the new version. Kept until then,
they are most of what an idle served session holds (τ² retail: issue 30). So they go at once.

Only what depends on the user's words is dropped; what a result's values alone give (its
index's views) and what is brought up to date message by message (`said`, `tsaid`: the values
the user wrote, read again only in the messages since) stay. Decisions are the same either way.
"""

from __future__ import annotations

from typing import Any

from stretto_core.learn.bindings.pick import Holders
from stretto_core.sessions.state import ResultEntry, ToolState

_NONE: frozenset[str] = frozenset()
"""One empty set for every holders reset (each `frozenset()` is a new object of 216 bytes)."""

PER_VERSION_TAGS = frozenset({"n", "h", "df", "g"})
"""Tuple tags of a result's cache whose value holds for one `user_version` (`mention.py`, `pick.py`):
a naming context, element hits, a pool's word frequencies, a given value held."""


def per_version(tag: Any) -> bool:
    """A tag of `ResultEntry.cache` whose value is derived from the user's words at one version
    (a path's `named_view` is kept under the path itself, which starts with `$`)."""
    if type(tag) is str:
        return tag.startswith("$")
    return type(tag) is tuple and bool(tag) and tag[0] in PER_VERSION_TAGS


def forget_stale(state: ToolState) -> int:
    """Drop the per-version namings of every result a served state still holds, and the naming
    fields of its holders (their results and candidates stay); returns how many cache entries went.
    (A result both in a window and pointed to by a call is looked at twice: nothing is left the second time.)"""
    dropped = 0
    for window in state.ok_results.values():
        for entry in window:
            if entry.cache:
                dropped += _forget_entry(entry)
    for entry in state.result_for.values():
        if entry.cache:
            dropped += _forget_entry(entry)
    for held in state.views.values():
        if type(held) is Holders and held.version >= 0:
            held.version, held.views, held.fresh, held.picks = -1, None, False, None
            held.flagged, held.named, held.fresh_pool = _NONE, False, None
    return dropped


def _forget_entry(entry: ResultEntry) -> int:
    cache = entry.cache
    stale = [tag for tag in cache if per_version(tag)]
    if stale:  # a new table: a dict keeps its size when keys are deleted
        entry.cache = {tag: value for tag, value in cache.items() if not per_version(tag)}
    return len(stale)
