"""Safety is the product: stretto never calls a tool that is not a known read.

Checked as a property over many generated flows, manifests and sessions: whatever the flow
learned, whatever kinds the sessions claimed, the engine only ever makes lookups of tools the
serving manifest marks `read`, the live manifest still marks `read` with the same contract, and
the allowlist (when set) names; with no live manifest (no authority) it makes none.

A property that no case exercises proves nothing, so each one also counts its cases that made
lookups and asserts they are a good share; and each is run once against a deliberately unsafe
engine (its guard permits every tool) to show that it would catch one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import pytest

from shared_data import published_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.evaluate.site_calibration import NotedBindings
from stretto_core.flow.ir import Flow, learn
from stretto_core.flow.site_calibration import SiteCalibration, SiteCount, site_key
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.manifest import InputContract, ToolKind, ToolManifest, ToolSpec
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage
from stretto_core.serve.speculator import Guard

TOOLS = [f"tool_{i}" for i in range(7)]
VALUES = ["a1", "b22", "c333", "d4444", "e5"]
KINDS = [ToolKind.read, ToolKind.write, ToolKind.generic, ToolKind.pure]
MOSTLY_READS = [ToolKind.read, ToolKind.read, ToolKind.read, ToolKind.write, ToolKind.generic, ToolKind.pure]
"""Kinds drawn so that most cases have reads to look up (and so exercise the guard)."""


@st.composite
def manifests(draw: Any, allow_missing: bool = True, kinds: Sequence[ToolKind] = KINDS) -> ToolManifest:
    tools = {}
    for name in TOOLS:
        if allow_missing and draw(st.booleans()) and draw(st.booleans()):
            continue  # a tool the manifest does not know: never a read
        contract = InputContract(args={"x": "string"}, required=["x"]) if draw(st.booleans()) else None
        tools[name] = ToolSpec(kind=draw(st.sampled_from(kinds)), contract=contract)
    return ToolManifest(app="generated", tools=tools)


@st.composite
def sessions(draw: Any, index: int = 0) -> Session:
    events: list[Any] = [UserMessage(text=f"hello {draw(st.sampled_from(VALUES))}")]
    n = 0
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.integers(0, 4)) == 0:
            events.append(LLMTurn(text="a reply"))
            events.append(UserMessage(text="ok"))
            continue
        calls = []
        for _ in range(draw(st.integers(1, 2))):
            n += 1
            args = {"x": draw(st.sampled_from(VALUES))} if draw(st.booleans()) else {}
            calls.append(ToolCall(call_id=f"c{n}", tool=draw(st.sampled_from(TOOLS)), arguments=args))
        events.append(LLMTurn(calls=calls))
        for c in calls:
            listing = draw(st.lists(st.sampled_from(VALUES), max_size=3))
            events.append(ToolResult(call_id=c.call_id, tool=c.tool, content=str({"items": listing}),
                                     parsed={"items": listing}, error=draw(st.integers(0, 9)) == 0))
    return Session(header=SessionHeader(session_id=f"s{index}-{n}", harness="generated", task_id=str(index)),
                   events=events)


@dataclass
class Tally:
    """How many generated cases ran, and how many of them made at least one lookup."""

    cases: int = 0
    with_lookups: int = 0
    lookups: int = 0

    def add(self, called: list[str]) -> None:
        self.cases += 1
        self.with_lookups += bool(called)
        self.lookups += len(called)


class _PermitEverything(Guard):
    """The unsafe engine's guard: every tool passes (what a broken guard would do)."""

    def permits(self, tool: str) -> bool:
        return True


def unsafe(engine: Engine) -> Engine:
    """The same engine with its guard replaced by one that permits every tool."""
    engine.guard = _PermitEverything(engine.guard.flow_manifest, engine.guard.live_manifest)
    original = engine.session

    def session(live_manifest: ToolManifest | None = None):
        es = original(live_manifest)
        es.guard = _PermitEverything(es.guard.flow_manifest, es.guard.live_manifest)
        return es

    engine.session = session  # type: ignore[method-assign]
    return engine


def serve(engine: Engine, session: Session, called: list[str], live: ToolManifest | None = None) -> None:
    es = engine.session(live_manifest=live) if live is not None else engine.session()

    def call_tool(tool: str, args: dict) -> tuple[str, bool]:
        called.append(tool)
        return ('{"items": ["a1", "b22"]}', False)

    for event in session.events:
        es.observe(event)
        if isinstance(event, ToolResult):
            es.run_lookups(event.call_id, call_tool)


def as_learned(flow: Flow, served: list[Session]) -> FlowRuntime:
    return FlowRuntime(flow)


def served_flow_property(make_engine, tally: Tally, runtime_of=as_learned):
    """The property: over generated flows, manifests and sessions, only permitted reads are looked up."""

    @settings(derandomize=True, max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None, report_multiple_bugs=False)
    @given(learned_with=manifests(kinds=MOSTLY_READS),
           live=st.one_of(st.none(), manifests(kinds=MOSTLY_READS), manifests()),
           allow=st.one_of(st.none(), st.none(), st.sets(st.sampled_from(TOOLS), min_size=3)),
           train=st.lists(sessions(), min_size=2, max_size=6), served=st.lists(sessions(), min_size=1, max_size=3),
           theta=st.sampled_from([0.0, 0.0, 0.01, 0.3]), policy=st.sampled_from(["use", "next"]))
    def check(learned_with: ToolManifest, live: ToolManifest | None, allow: set[str] | None,
              train: list[Session], served: list[Session], theta: float, policy: str) -> None:
        flow = learn(train, learned_with)
        config = EngineConfig(theta=theta, policy=policy, live_manifest=live,
                              allow=frozenset(allow) if allow is not None else None)
        engine = make_engine(Engine(runtime_of(flow, served), config))
        called: list[str] = []
        for s in served:
            serve(engine, s, called, live)
        if live is None:  # no authority on tool kinds besides the flow: no lookup at all
            assert called == [], f"looked up {called[0]} with no authority on tool kinds"
            return
        tally.add(called)
        for tool in called:
            assert learned_with.is_read(tool), f"looked up {tool}, which the flow's manifest does not mark read"
            if live is not None:
                assert live.is_read(tool), f"looked up {tool}, which the live server does not mark read"
            if allow is not None:
                assert tool in allow, f"looked up {tool}, which is not on the allowlist"

    return check


def test_a_served_flow_only_ever_looks_up_permitted_reads() -> None:
    tally = Tally()
    served_flow_property(lambda engine: engine, tally)()
    assert tally.with_lookups >= 0.25 * tally.cases, f"only {tally.with_lookups} of {tally.cases} cases made a lookup"


def test_the_served_flow_property_catches_an_engine_whose_guard_permits_everything() -> None:
    with pytest.raises(AssertionError, match="looked up"):
        served_flow_property(unsafe, Tally())()


class LiftedSites:
    """A hostile calibration: every site the served sessions bind at, and every tool (writes included) at
    every site, counted as used 50 times as often as scored; counts how many bindings it lifted."""

    def __init__(self) -> None:
        self.lifted = 0

    def __call__(self, flow: Flow, served: list[Session]) -> FlowRuntime:
        noting = NotedBindings(FlowRuntime(flow))
        for s in served:
            serve(Engine(noting, EngineConfig(theta=0.0, live_manifest=flow.manifest)), s, [], flow.manifest)
        keys = set(noting.seen.values()) | {(t, site, "(no argument)", "plain") for t in TOOLS for site in TOOLS}
        sites = [SiteCount(tool=k[0], site=k[1], source=k[2], mention=k[3], weighed=100, score=1, used=50)
                 for k in sorted(keys)]
        runtime = FlowRuntime(flow.model_copy(update={"site_calibration": SiteCalibration(prior=0, sites=sites)}))
        plain_bind = runtime.bind

        def bind(tool: str, state: Any, site: str) -> Any:
            got = plain_bind(tool, state, site)
            self.lifted += got is not None and runtime.site_factors.get(site_key(tool, site, got), 1.0) > 1.0
            return got

        runtime.bind = bind  # type: ignore[method-assign]
        return runtime


def test_a_calibration_that_lifts_every_site_still_only_looks_up_permitted_reads() -> None:
    tally, lifting = Tally(), LiftedSites()
    served_flow_property(lambda engine: engine, tally, lifting)()
    assert tally.with_lookups >= 0.25 * tally.cases, f"only {tally.with_lookups} of {tally.cases} cases made a lookup"
    assert lifting.lifted >= 50, f"only {lifting.lifted} bindings were lifted by the calibration"


def test_the_lifted_calibration_property_catches_an_engine_whose_guard_permits_everything() -> None:
    with pytest.raises(AssertionError, match="looked up"):
        served_flow_property(unsafe, Tally(), LiftedSites())()


@dataclass
class _AnyBinding:
    arguments: dict[str, Any]
    rho: float = 1.0
    sources: list[str] | None = None


class _RecklessModel:
    """A flow that wants every tool, writes included, with certainty: the guard must still hold."""

    def __init__(self, manifest: ToolManifest) -> None:
        self.manifest = manifest

    def read_tools(self) -> Sequence[str]:
        return TOOLS

    def reach(self, history: Sequence[str], tool: str) -> float:
        return 1.0

    def next_step(self, history: Sequence[str]) -> dict[str, float]:
        return {t: 1.0 for t in TOOLS}

    def bind(self, tool: str, state: Any, site: str) -> _AnyBinding:
        return _AnyBinding({"x": f"{tool}-{len(state.results)}"}, 1.0, [])

    def threshold(self, site: str, default: float) -> float:
        return default

    def step_symbol(self, tool: str, error: bool, content: str, parsed: Any) -> str:
        return f"{tool}/{'failed' if error else 'ok'}/0"

    def reply_symbol(self, answered: bool = True) -> str:
        return "reply/answered/0"


def reckless_property(make_engine, tally: Tally):
    """The property: a model that wants every tool with certainty still only gets permitted reads."""

    @settings(derandomize=True, max_examples=150, deadline=None, database=None, report_multiple_bugs=False)
    @given(manifest=manifests(), live=manifests(), session=sessions(), policy=st.sampled_from(["use", "next"]))
    def check(manifest: ToolManifest, live: ToolManifest, session: Session, policy: str) -> None:
        engine = make_engine(Engine(_RecklessModel(manifest), EngineConfig(theta=0.0, policy=policy,
                                                                           live_manifest=live)))
        called: list[str] = []
        serve(engine, session, called, live)
        tally.add(called)
        guard = Guard(manifest, live)
        assert all(guard.permits(t) for t in called), f"looked up {called}"
        assert all(manifest.is_read(t) for t in called), f"looked up {called}"

    return check


def test_even_a_reckless_model_cannot_make_the_engine_call_a_write() -> None:
    tally = Tally()
    reckless_property(lambda engine: engine, tally)()
    assert tally.with_lookups >= 0.3 * tally.cases, f"only {tally.with_lookups} of {tally.cases} cases made a lookup"


def test_the_reckless_property_catches_an_engine_whose_guard_permits_everything() -> None:
    with pytest.raises(AssertionError, match="looked up"):
        reckless_property(unsafe, Tally())()


def test_a_tool_whose_contract_changed_on_the_server_is_not_looked_up() -> None:
    pinned = ToolManifest(tools={"get": ToolSpec(kind=ToolKind.read,
                                                 contract=InputContract(args={"id": "string"}, required=["id"]))})
    changed = ToolManifest(tools={"get": ToolSpec(kind=ToolKind.read,
                                                  contract=InputContract(args={"id": "string", "scope": "string"},
                                                                         required=["id", "scope"]))})
    assert Guard(pinned, pinned).permits("get")
    assert not Guard(pinned, changed).permits("get")
    assert "contract changed" in Guard(pinned, changed).why_not("get")


def test_an_unknown_tool_is_never_a_read() -> None:
    manifest = ToolManifest(tools={"known": ToolSpec(kind=ToolKind.read)})
    assert not manifest.is_read("unknown")
    assert not Guard(manifest).permits("unknown")


def session_listing_property(make_engine, tally: Tally):
    """The property: a session's own server listing narrows what may be looked up."""

    @settings(derandomize=True, max_examples=60, deadline=None, database=None, report_multiple_bugs=False)
    @given(manifest=manifests(allow_missing=False, kinds=MOSTLY_READS), session_live=manifests(), session=sessions())
    def check(manifest: ToolManifest, session_live: ToolManifest, session: Session) -> None:
        engine = make_engine(Engine(_RecklessModel(manifest), EngineConfig(theta=0.0)))
        called: list[str] = []
        serve(engine, session, called, session_live)
        tally.add(called)
        assert all(manifest.is_read(t) and session_live.is_read(t) for t in called), f"looked up {called}"

    return check


def test_a_sessions_own_server_listing_narrows_what_the_engine_may_look_up() -> None:
    tally = Tally()
    session_listing_property(lambda engine: engine, tally)()
    assert tally.with_lookups >= 0.25 * tally.cases, f"only {tally.with_lookups} of {tally.cases} cases made a lookup"


def test_the_listing_property_catches_an_engine_whose_guard_permits_everything() -> None:
    with pytest.raises(AssertionError, match="looked up"):
        session_listing_property(unsafe, Tally())()


@published_data
def test_with_a_user_present_the_telecom_agent_is_never_given_the_users_phone_tools() -> None:
    from stretto_core.sessions.ingest.common import ManifestSource
    from stretto_core.sessions.ingest.tau2 import convert
    from stretto_core.paths import data_root

    folder = data_root() / "tau2" / "trajectories" / "telecom"
    with_user = convert(next(folder.glob("gpt-4.1__results__*_default_*.json")), ManifestSource()).sessions[0]
    solo = convert(next(folder.glob("gpt-4.1__results__*_no-user_*.json")), ManifestSource()).sessions[0]
    assert solo.header.manifest.is_read("check_status_bar")
    assert not with_user.header.manifest.is_read("check_status_bar")
    assert with_user.header.manifest.is_read("get_customer_by_phone")
