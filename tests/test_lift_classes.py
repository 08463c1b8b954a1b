"""The class lift's classes read from the named tables (`lift_classes.list_classes`) are the fresh
picks made anew (`pick.fresh_pick`) at every list path of every pool, at every decision, on real
sessions: the class everywhere, the key where the pick is named."""

from __future__ import annotations

from collections import Counter

from real_corpora import CORPORA, corpus_fixture
from shared_data import full_data

from stretto_core.flow.ir import learn
from stretto_core.learn.bindings import lift_classes
from stretto_core.learn.bindings import named as bindings_named
from stretto_core.learn.bindings.lift_classes import SeveralNamed, list_paths
from stretto_core.learn.bindings.model import MENTIONED, PLAIN, source_key
from stretto_core.learn.bindings.pick import fresh_pick, holders, pool_of


corpus = corpus_fixture(sorted(CORPORA), named=True)


@full_data  # counts the cases it exercised: the sample holds too few
def test_the_classes_read_from_the_named_tables_are_the_fresh_picks_made_anew(corpus, monkeypatch) -> None:
    _, sessions = corpus
    seen: Counter[str] = Counter()
    last: dict[tuple[int, str], object] = {}

    def checked(state, tool):
        out = real(state, tool)
        pool = pool_of(state, tool)
        paths = list_paths(pool)
        anew = [(path, pick) for path in paths
                for pick in [fresh_pick(state, pool, path, holders(state, pool, path))] if pick is not None]
        assert [(key, path, mention) for key, path, _, mention in out] == [
            (source_key(tool, path), path, pick.mention) for path, pick in anew], (tool, paths)
        for (_, path, pick, mention), (_, pick_anew) in zip(out, anew):
            assert mention in (PLAIN, MENTIONED), mention
            seen[mention] += 1
            if mention == PLAIN:
                assert pick is None, (tool, path)  # not read, not made
            elif type(pick) is SeveralNamed:  # settled now, as `count_decision` may: the pick made anew
                assert pick.settle(state) == pick_anew.key and pick_anew.key in pick.named, (tool, path)
                seen["of several named, settled"] += 1
            else:
                assert pick == pick_anew.key, (tool, path)
        # the fallback for a pool without named tables makes the same picks
        assert [(k, p, m) for k, p, _, m in lift_classes._made_anew(state, pool, paths, [source_key(tool, p) for p in paths])] \
            == [(k, p, m) for k, p, _, m in out]
        tag = (id(state), tool)
        seen["pools without a list path" if not paths else
             "the same list again" if last.get(tag) is out else "a list made"] += 1
        last[tag] = out
        return out

    real = bindings_named.list_classes
    monkeypatch.setattr(bindings_named, "list_classes", checked)
    learn(sessions)
    # the property was exercised: named picks and plain, one named and several, lists kept and
    # made again, pools without a list path
    assert seen[PLAIN] > 500 and seen[MENTIONED] > 500 and seen["of several named, settled"] > 100, seen
    assert seen["a list made"] > 100 and seen["the same list again"] > 100, seen
    assert seen["pools without a list path"] > 100, seen
