"""A tool's fresh picks carried on from one state to the next (`fresh.fresh_picks`) are the picks
`fresh_pick` makes anew there, on real sessions."""

from __future__ import annotations

from collections import Counter

from real_corpora import CORPORA, corpus_fixture
from shared_data import full_data

from stretto_core.flow.ir import learn
from stretto_core.learn.bindings import fresh
from stretto_core.learn.bindings import sources as bindings_sources
from stretto_core.learn.bindings.pick import fresh_pick, holders


corpus = corpus_fixture(sorted(CORPORA), named=True)


@full_data  # counts the cases it exercised: the sample holds too few
def test_every_fresh_pick_read_from_a_tools_table_is_the_pick_made_anew(corpus, monkeypatch) -> None:
    name, sessions = corpus
    seen: Counter[str] = Counter()
    made: dict[tuple[int, str, str], tuple[object, tuple[int, int, int]]] = {}  # each pick made, and where

    def check(state, tool, paths, read):
        """Each path's pick as a reader has it (`read`) is the table's, and fresh_pick's made anew."""
        table = state.views[("fresh", tool)]
        for path, pick in zip(paths, read):
            kept = table.picks[path]
            assert pick == kept[0], (tool, path)
            if pick is not None and type(pick[0]) is not str:
                seen["unsettled until asked"] += made.get((id(state), tool, path), (None,))[0] is not kept
                pick = (fresh.settled(state, pick), pick[1])
            again = fresh_pick(state, table.pool, path, holders(state, table.pool, path))
            assert pick == (None if again is None else (again.key, again.mention)), (tool, path)
            tag, at = (id(state), tool, path), (table.pool[0].position, len(table.pool), table.version)
            if tag not in made or made[tag][0] is not kept:
                seen[f"made {('unnamed', 'named', 'clearest', 'general')[kept[1]]}"] += 1
                made[tag] = (kept, at)
            else:
                seen["carried to a pool grown since"] += made[tag][1][:2] != at[:2]
                seen["carried past the user's words since"] += made[tag][1][2] != at[2]

    def current(state, tool):
        got = real_current(state, tool)
        check(state, tool, got.paths, got.fresh)
        return got

    real_current = bindings_sources._current
    monkeypatch.setattr(bindings_sources, "_current", current)
    learn(sessions)
    # the property was exercised: picks made every way, carried on, settled late
    assert seen["made unnamed"] > 100, seen
    if name != "agentdojo":  # an AgentDojo user speaks once, and reads with a value seldom follow each other
        assert seen["carried to a pool grown since"] > 20 and seen["carried past the user's words since"] > 20, seen
    if name == "retail":
        assert seen["made named"] > 100 and seen["made clearest"] > 50 and seen["unsettled until asked"] > 50, seen
