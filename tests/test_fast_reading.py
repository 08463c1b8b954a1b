"""Learning's quick paths give what the plain ones gave: JSON values, result indexes, reach α."""

from __future__ import annotations

import datetime
import json
import math

import pytest

from shared_data import published_data
from hypothesis import given, settings
from hypothesis import strategies as st

from stretto_core.learn.counts import Counts
from stretto_core.learn.reach_alpha import EDGE, reach_log_marginal_likelihood
from stretto_core.sessions.jsonline import loads
from stretto_core.sessions.store import ReadReport, _parse_event_line, read_session
from stretto_core.sessions.values import (MAX_CONTAINERS, MAX_DEPTH, MAX_LEAVES, index_result, leaves_addressed,
                                          normalize)

EDGE_TEXTS = ['123456789012345678901234567890', '-9223372036854775809', '18446744073709551616', '1e400',
              'NaN', '[-Infinity]', '[1.0, -0.0, 5e-324, 0.30000000000000004]', '{"a": 1, "a": 2}',
              '"\\ud800"', '"\\ud83d\\ude00"', '"a\\u0000b"', ' {"a" : [ ] } \n']


@pytest.mark.parametrize("text", EDGE_TEXTS)
def test_a_json_text_is_read_to_the_value_json_loads_gives(text: str) -> None:
    mine, theirs = loads(text), json.loads(text)
    assert repr(mine) == repr(theirs) and type(mine) is type(theirs)


@pytest.mark.parametrize("text", ['{"a": 1,}', '[1, 2', '"a\tb"', '\ufeff{"a": 1}', 'True', '01'])
def test_a_text_json_refuses_is_refused_with_json_s_own_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as mine:
        loads(text)
    assert mine.value.msg == theirs.value.msg


def test_a_torn_session_line_is_skipped_for_the_reason_json_gives() -> None:
    report = ReadReport("s.jsonl")
    assert _parse_event_line('{"kind": "user", "text": "hi', 3, report) is None
    assert report.skipped == [(3, "not JSON (Unterminated string starting at); a torn or partial line")]


def test_a_line_nested_past_the_fast_parser_s_limit_is_still_read_as_before() -> None:
    deep = "[" * 300 + "]" * 300
    assert loads(deep) == json.loads(deep)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
    | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30)


def _nested(value) -> bool:
    return isinstance(value, (dict, list)) and any(isinstance(v, (dict, list))
                                                   for v in (value.values() if isinstance(value, dict) else value))


def test_any_json_document_is_read_to_the_value_json_loads_gives() -> None:
    nested = []

    @settings(max_examples=300, deadline=None)
    @given(JSON_VALUES)
    def check(value) -> None:
        text = json.dumps(value)
        assert repr(loads(text)) == repr(json.loads(text))
        nested.append(_nested(value))

    check()
    assert sum(nested) > 30  # the documents were nested ones, not only scalars


def _as_walked(structure) -> list:
    """The index as its tables read, leaf by leaf from `leaves_addressed` (the plain path), every
    table in order: values compared with `==` in a list (so 1, 1.0 and True are one)."""
    first_path, by_path, paths, records, keys = {}, {}, {}, {}, {}
    for path, address, value in leaves_addressed(structure):
        key = normalize(value)
        if key is None:
            continue
        records.setdefault(path, []).append((address, value))
        held = by_path.setdefault(path, [])
        if value not in held:
            held.append(value)
            keys.setdefault(path, []).append(key)
        first_path.setdefault(key, path)
        if path not in paths.setdefault(key, []):
            paths[key].append(path)
    return [list(table.items()) for table in (first_path, by_path, paths, records, keys)]


def _tables(idx) -> list:
    return [list(table.items()) for table in (idx.first_path, idx.by_path, idx.paths, idx.records, idx.keys)]


STRUCTURES = [
    {"a": [1, 2.0, True, None, " X ", {"b": []}], "c": {"1": "x", "d": "X"}},
    {"when": datetime.date(2024, 1, 2), "at": [datetime.datetime(2024, 1, 2, 3, 4)], "raw": b"x"},
    {1: "one", True: "yes", 2.5: "half", None: "none", "pair": ("a", 1), "set": {3}},
    [{"k": "v", "n": i % 3} for i in range(40)],
    {"v": list(range(10)) + [1.0, True, "x", 9.0, [2, 2.0]], "w": [{"u": [i, str(i)]} for i in range(12)]},
    {"many": list(range(MAX_LEAVES + 10))},
    [[i] for i in range(MAX_CONTAINERS + 5)],
    json.loads("[" * (MAX_DEPTH + 3) + '"deep"' + "]" * (MAX_DEPTH + 3)),
]


@pytest.mark.parametrize("structure", STRUCTURES, ids=range(len(STRUCTURES)))
def test_a_result_indexed_as_it_is_walked_is_the_index_of_its_leaves(structure) -> None:
    assert _tables(index_result("", structure)) == _as_walked(structure)


def test_any_json_result_indexed_as_it_is_walked_is_the_index_of_its_leaves() -> None:
    nested = []

    @settings(max_examples=300, deadline=None)
    @given(JSON_VALUES)
    def check(value) -> None:
        assert _tables(index_result("", value)) == _as_walked(value)
        nested.append(_nested(value))

    check()
    assert sum(nested) > 30


def _naive_reach_log_ml(counts: Counts, vocab_size: int, log_alphas: list[float]) -> list[float]:
    """The reach's log marginal likelihood as its formula reads: every (context, action) row its own."""
    alphas = [math.exp(x) for x in log_alphas]
    lg = math.lgamma
    actions = sorted(counts.actions())
    out = [0.0] * len(alphas)
    prev: dict = {}
    for j in range(counts.order + 1):
        habit, reach = counts.habit_level(j), counts.reach_level(j)
        if not habit:
            break
        pred: dict = {}
        for ctx in sorted(habit):
            n = habit[ctx][0]
            for action in actions:
                m = min(reach.get(ctx, {}).get(action, 0.0), n)
                parent = prev.get((ctx[1:], action))
                row = []
                for g, al in enumerate(alphas):
                    mean = min(max(parent[g] if parent else 1.0 / vocab_size, EDGE), 1.0 - EDGE)
                    a, b = al * mean, al * (1.0 - mean)
                    out[g] += lg(al) - lg(n + al) + lg(m + a) - lg(a) + lg(n - m + b) - lg(b)
                    row.append((m + a) / (n + al))
                pred[(ctx, action)] = row
        prev = pred
    return out


@published_data
def test_the_reach_s_likelihood_computing_equal_rows_once_is_the_row_by_row_sum(tau2_ingested) -> None:
    from stretto_core.learn.steps import session_symbols
    from stretto_core.sessions.store import load_sessions

    sessions = [s for s in load_sessions(tau2_ingested) if s.header.app == "tau2/retail"]
    counts = Counts()
    for s in sessions:
        counts.add(*session_symbols(s), s.header.manifest.is_write)
    assert counts.sequences() >= 5  # the tests' sample holds 7 retail sessions, the shared data 151
    grid = [-4.0 + 0.25 * i for i in range(41)]
    mine, plain = reach_log_marginal_likelihood(counts, 20, grid), _naive_reach_log_ml(counts, 20, grid)
    assert len(mine) == len(plain) == 41
    # equal rows are added once with their multiplicity: the same sum up to float rounding
    assert all(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for a, b in zip(mine, plain))
    assert all(math.isfinite(x) for x in mine)


def test_sessions_of_one_manifest_share_its_model_and_another_manifest_is_its_own(tmp_path) -> None:
    header = {"stretto_session": 2, "harness": "h", "manifest": {"tools": {"get": {"kind": "read"}}}}
    other = {**header, "manifest": {"tools": {"get": {"kind": "write"}}}}
    paths = []
    for i, head in enumerate([header, header, other]):
        path = tmp_path / f"s{i}.jsonl"
        path.write_text(json.dumps({**head, "session_id": f"s{i}"}) + "\n", encoding="utf-8")
        paths.append(path)
    first, second, third = (read_session(p).header.manifest for p in paths)
    assert first is second and first.is_read("get")
    assert third is not first and third.is_write("get")
