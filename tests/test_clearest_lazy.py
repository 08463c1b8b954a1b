"""The clearest naming, reading the namings of the named candidates alone, is the one found by
reading every candidate's (`namings`), on real sessions: the pick and the case where several
candidates are named and their strengths decide."""

from __future__ import annotations

from shared_data import full_data

from stretto_core.flow.ir import learn
from stretto_core.learn.bindings import fresh, mention, pick
from stretto_core.learn.bindings.mention import _document_frequency, named_view, namings
from stretto_core.sessions.store import load_sessions


def clearest_of_every_naming(state, pool, path, open_, views=None):
    """`mention.clearest` as it reads in full: every open result's namings, then the best rank."""
    if not state.user_version:
        return None
    named = []
    for at, (entry, indexes) in enumerate(open_):
        view = named_view(state, entry, path) if views is None else views[at]
        if view is None:
            continue
        found = namings(state, entry, path)
        for i in (view.named if len(indexes) == len(view.flags) else indexes):
            if view.flags[i]:
                named.append((entry, i, *found[i]))
    if not named:
        return None
    if len(named) == 1:
        return named[0][0], named[0][1]
    df = _document_frequency(state, pool, path)
    best, best_rank = None, None
    for entry, i, direct, words in named:
        ranks = [(1.0, direct[0], -direct[1])] if direct is not None else []
        ranks += [(1.0 / max(1, df.get(w, 1)), m, -p) for w, (m, p) in words.items()]
        rank = max(ranks)
        if best_rank is None or rank > best_rank:
            best, best_rank = (entry, i), rank
    return best


@full_data  # counts the cases it exercised: the sample holds too few
def test_the_clearest_of_the_named_candidates_alone_is_the_clearest_of_all(tau2_ingested, monkeypatch) -> None:
    asked = {"calls": 0, "several": 0, "picked": 0}
    lazy = mention.clearest

    def both(state, pool, path, open_, views=None):
        got = lazy(state, pool, path, open_, views)
        assert got == clearest_of_every_naming(state, pool, path, open_, views)
        named = sum(len(v.named) for v in (views or [named_view(state, e, path) for e, _ in open_]) if v)
        asked["calls"] += 1
        asked["several"] += named > 1
        asked["picked"] += got is not None
        return got

    monkeypatch.setattr(fresh, "clearest", both)
    monkeypatch.setattr(pick, "clearest", both)
    sessions = [s for s in load_sessions(tau2_ingested) if s.header.app == "tau2/retail"]
    learn(sessions)
    assert asked["calls"] >= 20 and asked["several"] >= 5 and asked["picked"] >= 5, asked
