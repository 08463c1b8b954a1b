"""Full states share one index per distinct result, kept by recent use and bounded (issue 30, goal 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared_data import published_data

import stretto_core.sessions.shared_indexes as indexes
from stretto_core.flow.stream import choose, learn_chosen
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.shared_indexes import FULL_INDEX_CACHE, INDEX_CACHE, clear_result_indexes
from stretto_core.sessions.shared_indexes import shared_index as _shared_index


def _result(i: int) -> str:
    return json.dumps({"order_id": f"#W{i:07d}", "items": [{"name": "lamp", "price": i}]})


@pytest.fixture(autouse=True)
def empty_cache():
    clear_result_indexes()
    yield
    clear_result_indexes()


def test_a_result_met_again_after_more_than_the_served_bound_is_not_indexed_anew() -> None:
    first = _shared_index(_result(0), None)
    for i in range(1, INDEX_CACHE + 50):
        _shared_index(_result(i), None)
    assert _shared_index(_result(0), None) is first


def test_a_result_used_lately_outlives_older_ones_when_the_cache_is_full() -> None:
    kept = _shared_index(_result(0), None)
    for i in range(1, FULL_INDEX_CACHE):
        _shared_index(_result(i), None)
    _shared_index(_result(0), None)  # used again: now the newest
    _shared_index(_result(FULL_INDEX_CACHE), None)  # one more: the least recently used goes
    assert _shared_index(_result(0), None) is kept
    assert _result(1) not in indexes._indexes


def test_the_cache_never_holds_more_than_its_bound() -> None:
    for i in range(FULL_INDEX_CACHE + 300):
        _shared_index(_result(i), None)
        _shared_index(_result(i // 2), None)
    assert len(indexes._indexes) == FULL_INDEX_CACHE


def test_the_same_content_parsed_otherwise_is_indexed_again_in_its_place() -> None:
    text = _result(7)
    plain = _shared_index(text, None)
    other = _shared_index(text, {"order_id": "#W0000007"})
    assert other is not plain and "#w0000007" in other.first_path
    assert len(indexes._indexes) == 1


@published_data
def test_learning_shares_indexes_without_moving_a_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest_files("tau2", [data_root() / "tau2/trajectories/retail"], tmp_path / "retail")
    chosen = choose([str(tmp_path / "retail")], "train")
    shared = learn_chosen(chosen).to_json()
    monkeypatch.setattr(indexes, "FULL_INDEX_CACHE", 1)  # every result indexed anew
    assert learn_chosen(chosen).to_json() == shared
