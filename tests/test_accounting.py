"""Three accounting rules of replay and the ceiling (issue 13, item 4).

(a) A call whose recorded result is a transient failure is never counted as saved: the lookup
    that matched it is reported apart. (b) A `pure` tool (think, calculate) changes nothing: no
    read's reach ends at it, in the ceiling, in replay, in learning or in serving, and it is never
    looked up. (c) A manifest given to `ingest` replaces the shipped one, and a replay's authority
    on tool kinds is the tools the session's own harness listed.
"""

from __future__ import annotations

from shared_data import published_data

import json
from pathlib import Path
from typing import Any, Sequence

from stretto_core.evaluate.measure.ceiling import ceiling_report, measure_session, render_table
from stretto_core.evaluate.measure.metrics import compare_speculators, render_comparisons
from stretto_core.evaluate.replay.episode import prepare_session
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.replay.summary import render_summary
from stretto_core.flow.ir import learn
from stretto_core.paths import data_root
from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.manifest import ToolKind, ToolManifest, ToolSpec, load_manifest
from stretto_core.sessions.model import Session
from stretto_core.sessions.state import ToolState
from stretto_core.sessions.store import load_sessions
from stretto_core.sessions.turns import TurnClass, classify_turns
from test_replay_fakes import MANIFEST, Script, Shop, shop_flow
from test_safety_property import _AnyBinding, _RecklessModel

EMAIL = {"email": "ann@x.org"}
USER = {"user_id": "u1"}
AIRLINE = data_root() / "tau2" / "trajectories" / "airline"
RETAIL = data_root() / "tau2" / "trajectories" / "retail"


def replay(session: Session, flow: Any = None, **options: Any):
    return replay_sessions(flow or shop_flow(get_user={}), [session], ReplayOptions(**options))


def with_kind(session: Session, tool: str, kind: ToolKind) -> Session:
    """The session with one tool's kind in its header's manifest changed."""
    tools = dict(session.header.manifest.tools)
    tools[tool] = ToolSpec(kind=kind)
    header = session.header.model_copy(update={"manifest": ToolManifest(app="shop", tools=tools)})
    return session.model_copy(update={"header": header})


# (a) transient failures ---------------------------------------------------------------------

def read_user_but_the_service_fails(first: str = "Error: 503") -> Script:
    """find_user, then get_user answered by a failure of the moment, then the agent's retry."""
    return (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(Shop())
            .agent(("get_user", USER)).result(first, error=True)
            .agent(("get_user", USER)).play(Shop()).agent(text="Found you."))


def test_a_lookup_that_matches_a_call_met_by_a_503_is_reported_apart_and_saves_nothing() -> None:
    result = replay(read_user_but_the_service_fails().session())
    assert (result.turns_saved, result.used, result.detours) == (0, 0, 0)
    assert result.transient == 1
    [row] = result.lookup_rows
    assert row.transient and not row.used and not row.detour and not row.answered
    [episode] = result.episode_rows
    assert (episode.calls_answered, episode.transient, episode.lookups) == (0, 1, 1)


def test_an_error_the_agents_retry_did_not_meet_again_is_transient_whatever_it_says() -> None:
    result = replay(read_user_but_the_service_fails("Error: something went wrong").session())
    assert result.turns_saved == 0
    assert result.transient == 1


def test_an_error_the_call_itself_earns_is_still_an_answer() -> None:
    script = (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(Shop())
              .agent(("get_user", USER)).result("Error: user not found", error=True).agent(text="Who are you?"))
    result = replay(script.session())
    assert (result.turns_saved, result.used) == (1, 1)
    assert getattr(result, "transient", 0) == 0


def test_which_failures_are_transient() -> None:
    from stretto_core.sessions.failures import is_transient_failure

    transient = ["Error: 503", "Error: HTTP 502 Bad Gateway", "503 Service Unavailable", "Error: request timed out",
                 "Error: 429 Too Many Requests", "ConnectionResetError: connection reset by peer",
                 "Error: status code 504", "Error: the service is temporarily unavailable, try again later"]
    lasting = ["Error: Order #W5030 not found", "Error: User 503 not found", "ValueError: No emails found.",
               "ValidationError: 1 validation error for Input schema", "Error: Reservation H503XX not found"]
    assert [t for t in transient if not is_transient_failure(t, True)] == []
    assert [t for t in lasting if is_transient_failure(t, True)] == []
    assert not is_transient_failure('{"status": 503, "note": "timeout"}', False), "a result that is no error"
    assert is_transient_failure("Error: user not found", True, retried_otherwise=True)


def test_the_replay_summary_and_table_3_show_the_transient_lookups_apart() -> None:
    result = replay(read_user_but_the_service_fails().session())
    assert "Transient (apart)" in render_summary(result)
    comparison = compare_speculators(result, result, draws=20)
    assert (comparison.a.transient, comparison.b.transient, comparison.difference.transient) == (1, 1, 0)
    assert "Transient (apart)" in render_comparisons([comparison])


# (b) pure tools ---------------------------------------------------------------------------

def identify_think_then_read() -> Session:
    """find_user, then a `think` call, then get_user with the id find_user returned."""
    shop = Shop()
    return (Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(shop)
            .agent(("think", {"thought": "now the user"})).play(shop)
            .agent(("get_user", USER)).play(shop).agent(text="Found you.")).session()


def test_a_pure_tool_ends_no_reach_in_the_ceiling_where_a_generic_one_does() -> None:
    generic = identify_think_then_read()
    pure = with_kind(generic, "think", ToolKind.pure)
    assert classify_turns(generic, generic.header.manifest)[1:3] == [TurnClass.write, TurnClass.read]
    assert classify_turns(pure, pure.header.manifest)[1:3] == [TurnClass.pure, TurnClass.ceiling]
    report = ceiling_report([measure_session(pure, pure.header.manifest)])
    assert (report.rows[-1].pure, report.rows[-1].writes, report.rows[-1].ceiling) == (1, 0, 1)
    assert "Pure" in render_table(report)
    assert "Pure" not in render_table(ceiling_report([measure_session(generic, generic.header.manifest)]))


def test_a_lookup_reaches_across_a_pure_tool_in_replay_and_not_across_a_generic_one() -> None:
    generic = identify_think_then_read()
    pure = with_kind(generic, "think", ToolKind.pure)
    assert (replay(generic).turns_saved, replay(generic).detours) == (0, 1)
    assert (replay(pure).turns_saved, replay(pure).detours) == (1, 0)
    assert replay(pure).ceiling_turns == 1


def test_learning_and_serving_state_let_a_reach_pass_a_pure_tool() -> None:
    session = with_kind(identify_think_then_read(), "think", ToolKind.pure)
    manifest = session.header.manifest
    runtime = FlowRuntime(learn([session] * 3, manifest))
    assert runtime.reach(["find_user/ok/0"], "get_user") > 0.5
    state = ToolState(manifest)
    state.observe_call("c9", "think", {"thought": "x"})
    assert state.writes == 0, "a pure call is no write for the served state"
    state.observe_call("c10", "cancel_order", {"order_id": "o1"})
    assert state.writes == 1


class WantsEverything(_RecklessModel):
    """A flow that wants every tool of its manifest after every step, with certainty."""

    def __init__(self, manifest: ToolManifest, arguments: dict[str, Any] | None = None) -> None:
        super().__init__(manifest)
        self.arguments = arguments or {}

    def read_tools(self) -> Sequence[str]:
        return sorted(self.manifest.tools)

    def next_step(self, history: Sequence[str]) -> dict[str, float]:
        return {t: 1.0 for t in self.manifest.tools}

    def bind(self, tool: str, state: Any, site: str) -> _AnyBinding:
        return _AnyBinding(dict(self.arguments), 1.0, [])


def test_a_pure_tool_is_never_looked_up_even_by_a_flow_that_wants_it() -> None:
    pure = ToolManifest.declare("shop", reads=["get_user"], pure=["think"])
    session = Script().user("hi").agent(("get_user", USER)).play(Shop()).agent(text="ok").session()
    session = session.model_copy(update={"header": session.header.model_copy(update={"manifest": pure})})
    tools = {r.tool for r in replay(session, WantsEverything(pure), theta=0.0).lookup_rows}
    assert tools == {"get_user"}


@published_data
def test_the_shipped_tau2_manifests_read_calculate_as_pure(tmp_path: Path) -> None:
    [path] = [p for p in RETAIL.glob("*toolorchestra*.json")]
    ingest_files("tau2", [path], tmp_path)
    manifest = load_sessions([tmp_path])[0].header.manifest
    assert manifest.kind("calculate") is ToolKind.pure
    assert manifest.kind("transfer_to_human_agents") is ToolKind.generic
    shipped = load_manifest(data_root() / "manifests" / "tau2-retail.json")
    assert shipped.kind("calculate") is ToolKind.generic, "the file itself says generic"


def test_manifest_files_of_version_1_are_read_and_the_benchmark_forms_think_is_pure(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"stretto_manifest": 1, "tools": {"get": {"kind": "read"}}}))
    assert load_manifest(old).is_read("get")
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps({"benchmark": "tau", "domain": "airline", "tools": {"think": "think"}}))
    assert load_manifest(bench).kind("think") is ToolKind.pure


# (c) the manifest a session is read and replayed under -------------------------------------

def v1_airline_manifest(tmp_path: Path) -> Path:
    """τ-bench's airline tools as a harness of it lists them: τ²'s, without get_flight_status."""
    shipped = json.loads((data_root() / "manifests" / "tau2-airline.json").read_text())
    tools = {name: kind for name, kind in shipped["tools"].items() if name != "get_flight_status"}
    tools["think"] = "generic"
    out = tmp_path / "tau-airline.json"
    out.write_text(json.dumps({"benchmark": "tau", "domain": "airline", "tools": tools}))
    return out


@published_data
def test_a_manifest_given_to_ingest_replaces_the_shipped_one(tmp_path: Path) -> None:
    [path] = [p for p in AIRLINE.glob("gpt-4.1__*.json")]
    ingest_files("tau2", [path], tmp_path / "out", manifest=v1_airline_manifest(tmp_path))
    manifest = load_sessions([tmp_path / "out"])[0].header.manifest
    assert "get_flight_status" not in manifest.tools and not manifest.is_read("get_flight_status")
    assert "think" in manifest.tools and manifest.is_read("get_user_details")


@published_data
def test_a_replay_of_sessions_ingested_under_their_harness_manifest_never_looks_up_another_harness_tool(
        tmp_path: Path) -> None:
    [path] = [p for p in AIRLINE.glob("gpt-4.1__*.json")]
    ingest_files("tau2", [path], tmp_path / "shipped")
    ingest_files("tau2", [path], tmp_path / "own", manifest=v1_airline_manifest(tmp_path))
    wants = WantsEverything(ToolManifest.declare("tau2/airline", reads=["get_flight_status"]),
                            {"flight_number": "HAT001", "date": "2024-05-15"})  # as a flow learned on τ² would

    def looked_up(folder: str) -> int:
        result = replay_sessions(wants, load_sessions([tmp_path / folder])[:5], ReplayOptions(theta=0.0))
        return sum(1 for r in result.lookup_rows if r.tool == "get_flight_status")

    assert looked_up("shipped") > 0, "under τ²'s own manifest the tool is a read, and the flow wants it"
    assert looked_up("own") == 0


def test_a_replay_under_a_given_manifest_is_narrowed_by_it_when_the_header_lists_more() -> None:
    session = Script().user("I am ann@x.org").agent(("find_user", EMAIL)).play(Shop()).agent(text="ok").session()
    without_get_user = ToolManifest.declare("shop", reads=["find_user"], writes=["cancel_order"])
    episode = prepare_session(session, without_get_user)
    assert replay_sessions(shop_flow(), [episode]).lookups == 0, "the header lists get_user; the manifest given does not"
    assert replay_sessions(shop_flow(), [prepare_session(session)]).lookups == 1
    from stretto_core.evaluate.replay.walk import replay_authority

    assert replay_authority(episode).is_read("find_user") and not replay_authority(episode).is_read("get_user")


def test_an_engine_wide_manifest_narrows_a_sessions_listing_and_never_widens_it() -> None:
    engine = Engine(shop_flow(), EngineConfig(live_manifest=MANIFEST))
    listing = ToolManifest.declare("shop", reads=["find_user"])
    guard = engine.session(live_manifest=listing).guard
    assert guard.permits("find_user") and not guard.permits("get_user")
    narrower = Engine(shop_flow(), EngineConfig(live_manifest=ToolManifest.declare("shop", writes=["get_user"])))
    assert not narrower.session(live_manifest=MANIFEST).guard.permits("get_user")
