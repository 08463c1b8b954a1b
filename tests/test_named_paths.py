"""A result's named source paths (`named_table`, grown as the user speaks) are `named_view`'s, path by path."""

from __future__ import annotations

from collections import Counter

import pytest

from shared_data import published_data

from stretto_core.flow.ir import learn
from stretto_core.learn.bindings import fresh
from stretto_core.learn.bindings.mention import named_view, written
from stretto_core.learn.bindings.named_paths import named_table
from stretto_core.learn.bindings.pick import eligible_path
from stretto_core.paths import data_root
from stretto_core.sessions.focus import list_prefix
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.store import load_sessions

DOJO = "agentdojo/runs/gpt-4o-2024-05-13"
CORPORA = {"retail": ("tau2", ["tau2/trajectories/retail"], "tau2/retail"),
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
    return kept


@published_data
def test_the_named_table_of_a_result_is_named_view_at_each_of_its_paths(corpus, monkeypatch) -> None:
    seen: Counter[str] = Counter()

    def checked(state, entry):
        before = entry.cache.get("named")
        if before is not None and before.version != state.user_version and before.table:
            seen["brought up to date"] += 1  # not made anew: grown from the words since
            seen["a record word not yet whole"] += bool(before.unwhole)
        table = named_table(state, entry)
        if table is not None:
            said = written(state, entry) if state.user_version else set()
            for path in filter(eligible_path, entry.index.by_path):
                view = named_view(state, entry, path)
                assert table.get(path) == (None if view is None else view.keys), (entry.tool, path)
                seen["paths"] += 1
                if view is not None:
                    seen["named"] += 1
                    if list_prefix(path) is not None and not view.keys <= said:
                        seen["by a record word"] += 1
        return table

    monkeypatch.setattr(fresh, "named_table", checked)
    learn(corpus)
    assert seen["paths"] > 500 and seen["named"] > 100 and seen["by a record word"] > 50, seen
    assert seen["brought up to date"] > 20 or not any(s.header.app and s.header.app.startswith("tau2") for s in corpus), seen
