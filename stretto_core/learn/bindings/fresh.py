"""The fresh picks of a tool's pool, made once per path and carried on while nothing can move them.

A fresh pick (`pick.fresh_pick`: the free pick for an argument passed none of the candidates)
is asked for at every source path of every pool by the evidence (`sources`, at each value a
read is passed), again whenever the pool grows or the user speaks. Most answers are the same as
before. So each tool keeps one table of its pool's fresh picks (`FreshPicks`), path -> the pick
and how it was made, which is carried on (the class lift reads only the picks' classes, from
the named tables themselves: `lift_classes`):

- when the user speaks, a path's pick stays unless the new words hold a value the user wrote of
  a result of the pool that names a candidate at that path: the value itself, or a record word
  of the candidate's element (what a word names, and how clearly, moves only with the words
  the user writes): `_moved`;
- when the pool grows by a result in front (and loses its oldest, when full), a plain pick (the
  newest holder's first candidate, nothing named there) stays unless the results in or out hold
  the path; the one value named there stays unless they name one there too; the candidate named
  most clearly of several stays unless they name one there or hold a record word written in an
  element of the path's list (it weighs in how clearly each word names: `named_paths.naming_of`);
- a pick made by the general rule (only candidates without a key were named) is made anew.

Of several named, which one is the pick (`clearest`) is found only when its key is asked
(`Unsettled`): counting needs only its class, `mentioned`, unless a value counted or passed is
one of them.

A test holds every pick carried on equal to one made anew, on real sessions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from stretto_core.learn.bindings.mention import Named, candidates, clearest, keys_at, list_prefix, named_view, written
from stretto_core.learn.bindings.model import MENTIONED, PLAIN
from stretto_core.learn.bindings.named_paths import NamedTable, named_table, naming_of, token_of, view_of, word_of
from stretto_core.learn.bindings.tokens import tokens_said
from stretto_core.learn.bindings.pick import fresh_pick, gather, renamed
from stretto_core.sessions.state import ResultEntry, ToolState
from stretto_core.sessions.value_written import written_in
from stretto_core.sessions.values import ValueIndex

Fresh = tuple[str, str]
"""A fresh pick as counting needs it: its key and its mention class."""

UNNAMED, NAMED, CLEAREST, GENERAL = 0, 1, 2, 3
"""How a fresh pick was made: nothing named at the path (the newest holder's first candidate),
the one value named there, the candidate named most clearly of several, or the general rule of
`fresh_pick` (only candidates without a key were named)."""


@dataclass(slots=True)
class FreshPicks:
    """One tool's pool and its fresh picks as of one `user_version`, by path (made as asked)."""

    pool: list[ResultEntry]
    version: int
    said: int
    """The user's messages as of `version`."""
    picks: dict[str, tuple[Fresh | None, int]] = field(default_factory=dict)
    """Path -> its fresh pick and how it was made (`UNNAMED`, `NAMED`, `CLEAREST`, `GENERAL`)."""
    fragile: set[str] = field(default_factory=set)
    """The paths of `picks` made `CLEAREST` or `GENERAL` (moved by more than their own namings)."""
    tables: list[tuple[ResultEntry, NamedTable | None]] | None = None
    """The pool's results with their `named_table`s, once asked."""
    maybe: set[str] | None = None
    """Every path some of `tables` holds (None: some table cannot be told)."""
    dropped: int = 0
    """How many times picks were dropped (what read the table since may stand while it is the same)."""


def fresh_picks(state: ToolState, tool: str, pool: list[ResultEntry]) -> FreshPicks:
    """The table of `tool`'s current `pool` (`pool_of`), carried on to it (module docstring)."""
    tag = ("fresh", tool)
    got: FreshPicks | None = state.views.get(tag)
    if got is not None:
        if same_pool(got.pool, pool):
            if got.version != state.user_version:
                _renamed(state, got)
            return got
        if len(pool) > 1 and pool[1] is got.pool[0]:  # one newer result in front
            if got.version != state.user_version:
                _renamed(state, got)
            _slid(state, got, pool)
            return got
    got = state.views[tag] = FreshPicks(pool, state.user_version, state.user.count)
    return got


def same_pool(held: list[ResultEntry], pool: list[ResultEntry]) -> bool:
    """Whether `held` is the tool's current `pool` still (a pool only ever slides on)."""
    return held[0] is pool[0] and len(held) == len(pool)


def fresh_at(state: ToolState, table: FreshPicks, path: str) -> Fresh | None:
    """The fresh pick at `path` of the table's pool (made once, then read)."""
    got = table.picks.get(path)
    if got is None:
        tables = table.tables
        if tables is None:
            tables = _tables(state, table)
        maybe = table.maybe
        if maybe is None or path in maybe:
            got = _fresh(state, table, path, tables)
            if got[1] >= CLEAREST:
                table.fragile.add(path)
        else:
            got = _newest_first(table.pool, path)
        table.picks[path] = got
    return got[0]


def _tables(state: ToolState, table: FreshPicks) -> list[tuple[ResultEntry, NamedTable | None]]:
    """The pool's results with their named tables, and every path they name (`maybe`)."""
    tables = table.tables = [(entry, named_table(state, entry)) for entry in table.pool]
    maybe: set[str] | None = set()
    for _, named in tables:
        if named is None:
            maybe = None
            break
        maybe.update(named)  # type: ignore[union-attr]
    table.maybe = maybe
    return tables


def _renamed(state: ToolState, table: FreshPicks) -> None:
    """Bring the table to the state's `user_version`, its pool unchanged: drop the picks the new
    words may move."""
    user = state.user
    moved = _moved(state, table.pool, user.since(table.said)) if not user.dropped else None
    table.version, table.said, table.tables = state.user_version, user.count, None
    picks = table.picks
    before = len(picks)
    if moved is None:
        picks.clear()
        table.fragile = set()
    else:
        for path in moved:
            if picks.pop(path, None) is not None:
                table.fragile.discard(path)
        for path in [p for p in table.fragile if picks[p][1] == GENERAL]:
            del picks[path]
            table.fragile.discard(path)
    if len(picks) != before:
        table.dropped += 1


def _moved(state: ToolState, pool: list[ResultEntry], messages: list[str]) -> set[str] | None:
    """The paths of the pool's results whose fresh picks `messages`, the user's newest, may have
    moved; None when it cannot be told.

    A pick weighs only namings, and a naming only values the user wrote (`written`): where they
    wrote it and how clearly. New words can move those only for values they hold: a value names
    its own candidate (at the paths holding it) or, a record word, the candidates of its records
    (`named_paths.word_of`), and how clearly a word names weighs its frequency over the pool's
    records, which moves only with the words the user writes: those candidates again."""
    said_now = _said_in(state, messages)
    paths: set[str] = set()
    for entry in pool:
        if type(entry.index) is not ValueIndex:
            return None
        said = written(state, entry)
        if said:
            held = entry.index.paths
            for key in said:
                if said_now(key):
                    paths.update(held.get(key, ()))
                    worded = word_of(entry, key)
                    if worded.targets:
                        paths.update(path for path, _ in worded.targets)
        for token in tokens_said(state, entry):  # a record token names as a record word does
            if said_now(token):
                paths.update(path for path, _ in token_of(entry, token).targets)
    return paths


def _said_in(state: ToolState, messages: list[str]) -> Callable[[str], bool]:
    """Whether a value is in `messages` (the user's newest), each value looked for once whatever
    the results holding it (kept in `state.views` for the newest messages asked about)."""
    mark = (state.user.count, len(messages))
    got = state.views.get("said-in")
    if got is not None and got[0] == mark:
        return got[1]
    joined = "\n".join(messages)
    found: dict[str, bool] = {}

    def said(key: str) -> bool:
        hit = found.get(key)
        if hit is None:
            hit = found[key] = written_in(joined, key)
        return hit
    state.views["said-in"] = (mark, said)
    return said


def _slid(state: ToolState, table: FreshPicks, pool: list[ResultEntry]) -> None:
    """Carry the table on to `pool`, its own with one newer result in front (and the oldest out,
    when full): drop the picks the results in and out may move (module docstring)."""
    old = table.pool
    changed = [pool[0]] + ([old[-1]] if len(pool) == len(old) else [])
    table.pool, table.tables = pool, None
    picks, fragile = table.picks, table.fragile
    if not picks:
        return
    table.dropped += 1  # the pool is another: what read it reads again
    hit: set[str] = set()
    for entry in changed:
        naming = naming_of(state, entry)
        if naming is None:
            picks.clear()
            fragile.clear()
            return
        named = naming.table
        for path in entry.index.by_path:  # held: an unnamed pick moves, a named one if named there
            got = picks.get(path)
            if got is not None and (got[1] == UNNAMED or got[1] == GENERAL or path in named):
                del picks[path]
                fragile.discard(path)
        hit |= naming.hit_lists
    # a record word written in an element of a list weighs in how clearly each names there
    for path in [p for p in fragile if picks[p][1] == GENERAL or list_prefix(p) in hit]:
        del picks[path]
        fragile.discard(path)


def _newest_first(pool: list[ResultEntry], path: str) -> tuple[Fresh | None, int]:
    """The first candidate of the newest result holding the path, plain."""
    for entry in pool:
        if path in entry.index.by_path:
            return _first_of(entry, path)
    return None, UNNAMED


def _first_of(entry: ResultEntry, path: str) -> tuple[Fresh | None, int]:
    """The first candidate with a key at `path` of `entry`, plain."""
    cands = candidates(entry, path)
    return ((cands.keys[cands.keyed[0]], PLAIN) if cands.keyed else None), UNNAMED  # type: ignore[union-attr]


def _named_at(state: ToolState, tables: list[tuple[ResultEntry, NamedTable | None]], path: str
              ) -> tuple[ResultEntry | None, list[tuple[ResultEntry, Sequence[int]]], list[frozenset[str] | Named]]:
    """The newest result holding `path`, and each result where the user named a candidate there:
    (it, its candidates with a key), and what was named (its table's keys, or its `named_view`
    where it has no table)."""
    newest = None
    open_: list[tuple[ResultEntry, Sequence[int]]] = []
    found: list[frozenset[str] | Named] = []
    for entry, named_at in tables:
        if path in entry.index.by_path:
            if newest is None:
                newest = entry
            one = named_view(state, entry, path) if named_at is None else named_at.get(path)
            if one is None:
                continue
            open_.append((entry, candidates(entry, path).keyed))  # type: ignore[union-attr]
            found.append(one)
    return newest, open_, found


def _views(open_: list[tuple[ResultEntry, Sequence[int]]], found: list[frozenset[str] | Named],
           path: str) -> list[Named]:
    """Each open result's `named_view` at `path`, made from its table's keys where it has them."""
    return [one if type(one) is Named else view_of(entry, path, one)  # type: ignore[arg-type]
            for (entry, _), one in zip(open_, found)]


def _fresh(state: ToolState, table: FreshPicks, path: str,
           tables: list[tuple[ResultEntry, NamedTable | None]]) -> tuple[Fresh | None, int]:
    """The fresh pick at `path`, as `fresh_pick` makes it, straight from the pool's results.

    Nothing named there: the first candidate of the newest result holding the path, plain. Else
    the candidate the user named most clearly (`clearest`, every candidate being open), mentioned
    (`Unsettled` until its key is asked).
    """
    pool = table.pool
    newest, open_, found = _named_at(state, tables, path)
    if not open_:
        return _first_of(newest, path)  # type: ignore[arg-type]
    named: set[str] = set()
    for one in found:
        named.update(one.keys if type(one) is Named else one)  # type: ignore[union-attr]
    named.discard("")
    if len(named) == 1:  # however clearly each was named, the pick is this value
        return (named.pop(), MENTIONED), NAMED
    if named:  # some candidate with a key is named: `clearest` picks one, when its key is asked
        return (Unsettled(pool[0].tool, path, frozenset(named)), MENTIONED), CLEAREST  # type: ignore[return-value]
    best = clearest(state, pool, path, open_, _views(open_, found, path))
    if best is None:  # only candidates without a key were named: the general rule decides
        pick = fresh_pick(state, pool, path, renamed(state, path, gather(pool, path)))
        return (None if pick is None else (pick.key, pick.mention)), GENERAL
    return (keys_at(best[0], path)[best[1]], MENTIONED), CLEAREST


@dataclass(slots=True, eq=False)
class Unsettled:
    """The key of a fresh pick among several candidates named (so `mentioned`), found
    (`clearest`) only when asked (`settle`): most are never asked, the pick's class is all that
    counting them needs. Asked while its table keeps it, it is the key it would have been made."""

    tool: str
    """The tool whose `fresh_picks` keep it (not the table itself: no reference cycle)."""
    path: str
    named: frozenset[str]
    """The keys named at the path: the pick is one of them."""
    key: str | None = None

    def settle(self, state: ToolState) -> str:
        if self.key is None:
            table: FreshPicks = state.views[("fresh", self.tool)]
            path = self.path
            assert table.picks[path][0][0] is self, path  # type: ignore[index]
            tables = table.tables if table.tables is not None else _tables(state, table)
            self.key = clearest_key(state, table.pool, tables, path)
        return self.key


def clearest_key(state: ToolState, pool: list[ResultEntry], tables: list[tuple[ResultEntry, NamedTable | None]],
                 path: str) -> str:
    """The key at `path` the user named most clearly (`clearest`, every candidate open), where
    the pool's results (with their named `tables`) name several with a key there."""
    _, open_, found = _named_at(state, tables, path)
    best = clearest(state, pool, path, open_, _views(open_, found, path))
    assert best is not None, path  # a candidate with a key is named (`_fresh`)
    return keys_at(best[0], path)[best[1]]


def settled(state: ToolState, pick: Fresh) -> str:
    """The key of a fresh pick (settling it when `Unsettled`)."""
    key = pick[0]
    return key if type(key) is str else key.settle(state)  # type: ignore[attr-defined]


def may_be(pick: Fresh) -> frozenset[str] | tuple[str]:
    """The keys a fresh pick may have (one unless `Unsettled`)."""
    key = pick[0]
    return (key,) if type(key) is str else key.named  # type: ignore[attr-defined]
