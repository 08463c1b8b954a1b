"""Learning counts binding evidence in bulk (`bindings_sources`): the same counts, pick by pick."""

from __future__ import annotations

import gc

import pytest

from real_corpora import corpus_sessions
from shared_data import published_data

from stretto_core.learn.bindings import evidence as bindings_learn
from stretto_core.learn.bindings.evidence import count_session
from stretto_core.learn.bindings.model import ALIGNED, FREE, ArgCounts, source_key
from stretto_core.learn.bindings.pick import free_pick, pool_of
from stretto_core.learn.bindings.records import aligned_pick
from stretto_core.learn.bindings.sources import source_paths
from stretto_core.flow.ir import learn, manifest_of_sessions
from stretto_core.sessions.ingest import ingest_files
from stretto_core.paths import data_root
from stretto_core.sessions.state import ToolState
from stretto_core.sessions.store import load_sessions

TRAVEL = "agentdojo/runs/gpt-4o-2024-05-13/travel"


def count_one_by_one(state: ToolState, counts: ArgCounts, tool: str, arg: str, key: str,
                     anchors: list[str]) -> None:
    """The evidence of one value, every pick made and counted on its own (the rule as written)."""
    for source_tool in state.ok_results:
        pool = pool_of(state, source_tool)
        for path in source_paths(pool):
            src = source_key(source_tool, path)
            pick = free_pick(state, tool, arg, pool, path)
            if pick is not None:
                _bump(counts.evidence[FREE], pick.mention, src, pick.key == key)
            if anchors:
                pick = aligned_pick(state, tool, arg, pool, path, anchors) or pick
                if pick is not None:
                    _bump(counts.evidence[ALIGNED], pick.mention, src, pick.key == key)


def _bump(evidence: dict[str, dict[str, list[float]]], cls: str, src: str, eq: bool) -> None:
    cell = evidence.setdefault(cls, {}).setdefault(src, [0.0, 0.0])
    cell[0] += 1.0
    if eq:
        cell[1] += 1.0


def _sessions(tmp_path_factory: pytest.TempPathFactory, harness: str, source: str, limit: int):
    path = data_root() / source
    assert path.exists(), f"no {source} under the data root {data_root()}"
    out = tmp_path_factory.mktemp(harness)
    ingest_files(harness, [path], out)
    return load_sessions([out])[:limit]


@pytest.fixture(scope="module")
def airline(tmp_path_factory: pytest.TempPathFactory):
    """The first 60 of the two named airline runs (`real_corpora`), not of the whole folder."""
    return corpus_sessions("airline", tmp_path_factory.mktemp("airline"), most=60)


@pytest.fixture(scope="module")
def travel(tmp_path_factory: pytest.TempPathFactory):
    return _sessions(tmp_path_factory, "agentdojo", TRAVEL, 60)


@pytest.mark.parametrize("corpus", ["airline", "travel"])
@published_data
def test_bulk_counting_learns_the_flow_counting_pick_by_pick_learns(corpus: str, request,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = request.getfixturevalue(corpus)
    assert sessions
    bulk = learn(sessions).to_json()
    monkeypatch.setattr(bindings_learn, "count_value", count_one_by_one)
    assert learn(sessions).to_json() == bulk


@published_data
def test_counting_a_session_leaves_no_reference_cycle(airline) -> None:
    """A session's tool state (and every view of it) is freed as soon as it is counted, so
    learning gives the cyclic garbage collector nothing to find."""
    manifest = manifest_of_sessions(airline)
    count_session(airline[0], manifest)  # warm every lazy import and cache
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        for session in airline[:20]:
            count_session(session, manifest)
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()
