"""What a value names as a record word (`word_of`, read from one table per list) is what its
definition gives, element by element and path by path, on real sessions."""

from __future__ import annotations

from collections import Counter

from real_corpora import corpus_fixture
from shared_data import full_data

from stretto_core.flow.ir import learn
from stretto_core.learn.bindings import fresh, named_paths
from stretto_core.learn.bindings.mention import _keys_by_element, _word_elements, candidates
from stretto_core.learn.bindings.named_paths import lists_of, lists_under
from stretto_core.sessions.shared_indexes import clear_result_indexes


def plain_word_of(entry, word: str) -> tuple[tuple, frozenset]:
    """(targets, lists) as the module docstring reads: for each list (prefix) the value lies under
    and is a record word of, each of its elements holding it, each source path under the list:
    the candidates there in that element (`_keys_by_element`)."""
    if not any(c.isalpha() for c in word):
        return (), frozenset()
    lists = lists_of(entry)
    targets, found = [], []
    prefixes = dict.fromkeys(p for path in entry.index.paths.get(word, ()) if not path.endswith("*~")
                             for p in lists_under(path))
    for prefix in prefixes:
        elements = _word_elements(entry, prefix).get(word)
        if not elements:
            continue
        found.append(prefix)
        for element in elements if prefix in lists else ():
            for path in lists[prefix]:
                keys = _keys_by_element(entry, path, prefix).get(element, ())
                cands = candidates(entry, path)
                flagged = frozenset(k for k in keys if cands is not None and k in cands.first)
                if flagged:
                    targets.append((path, flagged))
    return tuple(targets), frozenset(found)


corpus = corpus_fixture(["agentdojo", "retail"])


@full_data  # counts the cases it exercised: the sample holds too few
def test_what_a_value_names_as_a_record_word_is_its_definition_on_real_sessions(corpus, monkeypatch) -> None:
    seen: Counter[str] = Counter()
    quick = named_paths.word_of

    def checked(entry, word):
        made = word not in entry.index_views.get("nw", {})
        got = quick(entry, word)
        targets, lists = plain_word_of(entry, word)
        assert (got.targets, got.lists) == (targets, lists), (entry.tool, word)
        if made:
            paths = entry.index.paths.get(word, ())
            seen["no letter" if not any(c.isalpha() for c in word) else
                 "under no list" if not lists and not any("[*]" in p for p in paths) else
                 "a record word of none" if not lists else
                 "held at several paths" if len(paths) > 1 else "held at one path"] += 1
            seen["elements"] += len({t for t in targets})
        return got

    monkeypatch.setattr(named_paths, "word_of", checked)
    monkeypatch.setattr(fresh, "word_of", checked)
    clear_result_indexes()  # results an earlier learn in this process named would not be named again
    learn(corpus)
    # every branch of the quick reading was taken, on a real share of values
    assert min(seen[k] for k in ("no letter", "under no list", "a record word of none", "held at one path",
                                 "held at several paths")) >= 2, seen
    assert seen["elements"] >= 50, seen
