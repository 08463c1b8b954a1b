"""A tool's fresh picks carried on from one state to the next (`fresh.fresh_picks`) are the picks
`fresh_pick` makes anew there, on real sessions."""

from __future__ import annotations

from collections import Counter

import pytest

from shared_data import published_data

from stretto_core.flow.ir import learn
from stretto_core.learn.bindings import fresh
from stretto_core.learn.bindings.pick import fresh_pick, holders
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.store import load_sessions

DOJO = "agentdojo/runs/gpt-4o-2024-05-13"
CORPORA = {"retail": ("tau2", ["tau2/trajectories/retail"], "tau2/retail"),
           "airline": ("tau2", ["tau2/trajectories/airline"], "tau2/airline"),
           "agentdojo": ("agentdojo", [f"{DOJO}/{suite}" for suite in ("banking", "slack", "travel", "workspace")], None)}
"""Each corpus: its harness, its folders under the data root, the app kept (None: every one)."""


@pytest.fixture(scope="module", params=sorted(CORPORA))
def corpus(request, tmp_path_factory: pytest.TempPathFactory):
    harness, folders, app = CORPORA[request.param]
    out = tmp_path_factory.mktemp(harness)
    kept = []
    for i, folder in enumerate(folders):
        path = data_root() / folder
        assert path.exists(), f"no {folder} under the data root {data_root()}"
        ingest_files(harness, [path], out / str(i))
        kept += [s for s in load_sessions([out / str(i)]) if app is None or s.header.app == app][:60]
    return request.param, kept


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
