"""A tool's fresh picks carried on from one state to the next (`fresh.fresh_picks`) are the picks
`fresh_pick` makes anew there, on real sessions."""

from __future__ import annotations

from collections import Counter

import pytest

from real_corpora import CORPORA, corpus_sessions
from shared_data import published_data

from stretto_core.flow.ir import learn
from stretto_core.learn.bindings import fresh
from stretto_core.learn.bindings.pick import fresh_pick, holders


@pytest.fixture(scope="module", params=sorted(CORPORA))
def corpus(request, tmp_path_factory: pytest.TempPathFactory):
    return request.param, corpus_sessions(request.param, tmp_path_factory.mktemp(request.param))


@published_data
def test_every_fresh_pick_read_from_a_tools_table_is_the_pick_made_anew(corpus, monkeypatch) -> None:
    name, sessions = corpus
    seen: Counter[str] = Counter()
    made: dict[tuple[int, str, str], tuple[object, tuple[int, int, int]]] = {}  # each pick made, and where

    def checked(state, table, path):
        kept = table.picks.get(path)
        pick = real(state, table, path)
        again = fresh_pick(state, table.pool, path, holders(state, table.pool, path))
        if pick is not None and type(pick[0]) is not str:
            seen["unsettled until asked"] += kept is None
            pick = (fresh.settled(state, pick), pick[1])
        assert pick == (None if again is None else (again.key, again.mention)), (table.pool[0].tool, path)
        tag, at = (id(state), table.pool[0].tool, path), (table.pool[0].position, len(table.pool), table.version)
        if kept is None:
            seen[f"made {('unnamed', 'named', 'clearest', 'general')[table.picks[path][1]]}"] += 1
            made[tag] = (table.picks[path], at)
        elif made[tag][0] is kept:
            seen["carried to a pool grown since"] += made[tag][1][:2] != at[:2]
            seen["carried past the user's words since"] += made[tag][1][2] != at[2]
        return real(state, table, path)

    real = fresh.fresh_at
    monkeypatch.setattr(fresh, "fresh_at", checked)
    monkeypatch.setattr("stretto_core.learn.bindings.sources.fresh_at", checked)
    learn(sessions)
    # the property was exercised: picks made every way, read again, carried on, settled late
    assert seen["made unnamed"] > 100 and seen["carried to a pool grown since"] > 20, seen
    if name != "agentdojo":  # an AgentDojo user speaks once
        assert seen["carried past the user's words since"] > 20, seen
    if name == "retail":
        assert seen["made named"] > 100 and seen["made clearest"] > 50 and seen["unsettled until asked"] > 50, seen
