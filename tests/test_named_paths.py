"""A result's named source paths (`named_table`, grown as the user speaks) are `named_view`'s, path by path."""

from __future__ import annotations

from collections import Counter

from real_corpora import corpus_fixture
from shared_data import full_data

from stretto_core.flow.ir import learn
from stretto_core.learn.bindings import fresh, lift_classes
from stretto_core.learn.bindings.mention import named_view, written
from stretto_core.learn.bindings.named_paths import named_table
from stretto_core.learn.bindings.pick import eligible_path
from stretto_core.sessions.focus import list_prefix


corpus = corpus_fixture(["agentdojo", "retail"])


@full_data  # counts the cases it exercised: the sample holds too few
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
    monkeypatch.setattr(lift_classes, "named_table", checked)
    learn(corpus)
    assert seen["paths"] > 500 and seen["named"] > 100 and seen["by a record word"] > 50, seen
    assert seen["brought up to date"] > 20 or not any(s.header.app and s.header.app.startswith("tau2") for s in corpus), seen
