"""The indexes states share across sessions: a result met again is not indexed (nor named) anew.

Indexes are never changed once made, so one may serve every state that meets the same result:
learning meets the same listings in many sessions, a serving process the same catalogue in many
conversations. Both caches are bounded by count; `clear_*` empties them (benchmarks measure memory
and learning speed without what an earlier run left).
"""

from __future__ import annotations

from typing import Any

from stretto_core.sessions.focus import Focus, index_focused
from stretto_core.sessions.values import ValueIndex, index_result

INDEX_CACHE = 256
"""Served states under a focus reuse the focused index of a result indexed lately with the same
content (indexes are never changed once made; a serving process meets the same listings often)."""

FULL_INDEX_CACHE = 1024
"""Full states (learning's, replay's) reuse the index of one of the last this many distinct results
used (least recently used dropped first). An index carries what learning derives of the result
alone (candidates, record words, what each value names: `index_views`), so a result met again is
neither indexed nor named anew. τ² retail's train split holds 408 distinct results among its
1,083: at 256, dropped oldest first, it indexed 694 (each met again after 256 others were
added); from 512 on, 408 (airline: 351 -> 291). Chosen on the train split, with room to spare;
bounded, it costs a learn of retail + airline train +4 MB peak RSS (57 -> 61 MB)."""

_indexes: dict[str, tuple[Any, ValueIndex]] = {}


_focused: dict[tuple[Any, str], tuple[Any, ValueIndex]] = {}


def shared_focused(focus: Focus, tool: str, content: str, parsed: Any) -> ValueIndex:
    """`index_focused` of a served result, shared by every session of the process that got the
    same result under the same focus lately (a catalogue read by many): one index, not one each."""
    paths = focus.of(tool)
    key = ((paths.exact, paths.prefixes) if paths is not None else None, content)
    got = _focused.get(key)
    if got is not None and (got[0] is parsed or got[0] == parsed):
        return got[1]
    index = index_focused(content, parsed, paths)
    if len(_focused) >= INDEX_CACHE:
        del _focused[next(iter(_focused))]
    _focused[key] = (parsed, index)
    return index


def clear_index_caches() -> None:
    """Forget the indexes shared between states (benchmarks measure memory without them)."""
    clear_result_indexes()
    _focused.clear()


def clear_result_indexes() -> None:
    """Forget the indexes full states (learning's, replay's) shared; served states' stay."""
    _indexes.clear()


def shared_index(content: str, parsed: Any) -> ValueIndex:
    """`index_result(content, parsed)`, from the cache when the same result was used lately (one
    used again moves to the newest end, so the results many sessions meet stay: `FULL_INDEX_CACHE`)."""
    got = _indexes.get(content)
    if got is not None and (got[0] is parsed or got[0] == parsed):
        if next(reversed(_indexes)) != content:
            del _indexes[content]
            _indexes[content] = got
        return got[1]
    index = index_result(content, parsed)
    if got is None and len(_indexes) >= FULL_INDEX_CACHE:
        del _indexes[next(iter(_indexes))]
    _indexes[content] = (parsed, index)
    return index
