"""The mention views' quick paths are their plain definitions: record words on every list of real
results, and the letter test on any text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shared_data import published_data

from stretto_core.learn.bindings.mention import (LIST_MARK, MIN_RECORD_WORD, _has_letter, _keys_by_element, addresses,
                                             candidates, record_words)
from stretto_core.sessions.focus import list_prefix
from stretto_core.sessions.model import ToolResult
from stretto_core.sessions.state import ResultEntry
from stretto_core.sessions.store import load_sessions
from stretto_core.sessions.values import index_result, normalize


def plain_record_words(entry: ResultEntry, prefix: str) -> dict:
    """`record_words` as its docstring reads, value by value."""
    depth = prefix.count(LIST_MARK)
    words: dict = {}
    for path, pairs in entry.index.records.items():
        if not path.startswith(prefix) or path.endswith("*~"):
            continue
        for address, value in pairs:
            if isinstance(value, str) and len(value) >= MIN_RECORD_WORD and any(c.isalpha() for c in value):
                words.setdefault(address[:depth], set()).add(normalize(value) or "")
    shared = set.intersection(*words.values()) if len(words) > 1 else set()
    return {addr: sorted(ws - shared) for addr, ws in words.items()}


def test_a_text_has_a_letter_when_one_of_its_characters_is_one() -> None:
    kinds = {"alpha": 0, "ascii": 0, "other": 0}

    @settings(max_examples=400, deadline=None)
    @given(st.text(alphabet=st.sampled_from("aZ09 -_#@é²½中ß\u0301"), max_size=8) | st.text(max_size=6))
    def check(text: str) -> None:
        assert _has_letter(text) == any(c.isalpha() for c in text)
        kinds["alpha" if text.isalpha() else "ascii" if text.isascii() else "other"] += 1

    check()
    assert min(kinds.values()) >= 20, kinds  # every branch of the quick test was taken


@published_data
def test_record_words_are_the_words_of_each_record_on_every_list_of_real_results(tau2_ingested) -> None:
    lists = words = 0
    for session in load_sessions(tau2_ingested):
        for event in session.events:
            if not isinstance(event, ToolResult):
                continue
            entry = ResultEntry(1, event.tool, event.call_id, {}, True, index_result(event.content, event.parsed), True)
            for prefix in {list_prefix(p) for p in entry.index.records} - {None}:
                got = record_words(entry, prefix)
                assert got == plain_record_words(entry, prefix)
                assert list(got) == list(plain_record_words(entry, prefix))
                lists += 1
                words += sum(map(len, got.values()))
    assert lists >= 50 and words >= 200, (lists, words)


def _entry(index) -> ResultEntry:
    return ResultEntry(position=0, tool="t", call_id="c", arguments={}, ok=True, index=index, by_agent=True)


def test_a_path_s_candidates_are_made_once_and_then_read_from_the_index_s_table() -> None:
    index = index_result('{"items": [{"id": "A1"}, {"id": "b2"}, {"id": "A1"}]}')
    first = candidates(_entry(index), "$.items[*].id")
    assert first is not None and first.keys == ["a1", "b2"] and first.first == {"a1": 0, "b2": 1}
    assert index.views["c"]["$.items[*].id"] is first  # kept with the index: any entry holding it reads it
    assert candidates(_entry(index), "$.items[*].id") is first
    assert candidates(_entry(index), "$.nothing") is None and "$.nothing" in index.views["c"]


def test_an_index_of_another_kind_has_its_candidates_kept_on_its_entry() -> None:
    class Plain:  # an index with no views of its own (as a served session's husk of a result)
        by_path = {"$.id": ["X9", ""]}
        keys: dict = {}

    entry = _entry(Plain())
    got = candidates(entry, "$.id")
    assert got is not None and got.keys == ["x9", ""] and list(got.keyed) == [0]
    assert entry.cache["c"]["$.id"] is got and candidates(entry, "$.id") is got


def test_a_path_s_addresses_and_keys_by_element_are_made_once_for_every_entry_holding_the_index() -> None:
    index = index_result('{"items": [{"id": "A1", "tag": "x"}, {"id": "b2"}, {"id": "a1"}]}')
    places = addresses(_entry(index), "$.items[*].id")
    assert places == {"a1": ((0,), (2,)), "b2": ((1,),)}
    assert addresses(_entry(index), "$.items[*].id") is places
    by_element = _keys_by_element(_entry(index), "$.items[*].id", "$.items[*]")
    assert by_element == {(0,): ("a1",), (2,): ("a1",), (1,): ("b2",)}
    assert _keys_by_element(_entry(index), "$.items[*].id", "$.items[*]") is by_element
