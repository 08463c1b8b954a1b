"""The collector runs between requests, never inside one, and a served session needs no collection."""

from __future__ import annotations

import gc
import weakref

import pytest

from shared_data import published_data

from stretto_core.evaluate.scripted import fixture_flow, load_fixture_episodes
from stretto_core.serve import pauses
from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import LLMTurn, ToolResult
from stretto_core.sessions.state import call_key


@pytest.fixture
def collector():
    was = gc.isenabled()
    got = pauses.Collector(young=50, middle=3, tenure_after=2)
    yield got
    got.stop()
    gc.unfreeze()
    assert gc.isenabled() == was


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_schedule_turns_automatic_collection_off_and_back_on(collector) -> None:
    collector.start()
    assert not gc.isenabled()
    collector.stop()
    assert gc.isenabled()


def test_no_collection_runs_between_requests_until_enough_containers_were_made(collector) -> None:
    collector.start()
    gc.collect()
    collector.between_requests()
    assert collector.collections == 0
    kept = [[] for _ in range(200)]
    collector.between_requests()
    assert collector.collections == 1 and kept


def test_what_survives_the_middle_collections_is_frozen_instead_of_collected_in_full(collector) -> None:
    collector.start()
    frozen = gc.get_freeze_count()
    kept = []
    for _ in range(3 * 2):
        kept.append([[] for _ in range(60)])
        collector.between_requests()
    assert collector.frozen == 1
    assert gc.get_freeze_count() > frozen


def test_a_garbage_cycle_waits_for_a_collection_between_requests_or_when_idle(collector) -> None:
    collector.start()
    gone = weakref.ref(Cycle())
    assert gone() is not None  # automatic collection is off: nothing frees it inside a request
    collector.when_idle()
    assert gone() is None


@published_data
def test_a_dropped_served_session_is_freed_by_reference_counts_alone() -> None:
    engine = Engine(FlowRuntime(fixture_flow("tau2/retail")), EngineConfig(per_session=10 ** 6))
    session = load_fixture_episodes("tau2/retail", split="test")[0]
    calls = {c.call_id: c for e in session.events if isinstance(e, LLMTurn) for c in e.calls}
    known = {call_key(c.tool, c.arguments): e.content for e in session.events
             if isinstance(e, ToolResult) and (c := calls.get(e.call_id)) is not None}
    gc.collect()
    gc.disable()
    try:
        es = engine.session(live_manifest=engine.model.manifest)
        made = 0
        for event in session.events:
            es.observe(event)
            if isinstance(event, ToolResult) and event.call_id in calls:
                while (decision := es.decide()) is not None:
                    es.add_lookup(decision, known.get(call_key(decision.tool, decision.arguments), "{}"), False)
                    made += 1
        assert made > 0 and es.state.ok_results
        state, session_ref = weakref.ref(es.state), weakref.ref(es)
        del es
        assert session_ref() is None and state() is None
    finally:
        gc.enable()
