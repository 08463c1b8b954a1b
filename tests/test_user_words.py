"""The user's words as a binding source: values by shape and position, counted like any result's."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from shared_data import full_data
from stretto_core.cli import app
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow.ir import learn, load_flow, save_flow
from stretto_core.learn.bindings.model import BindingOptions
from stretto_core.paths import data_root
from stretto_core.serve.bind import bind
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage
from stretto_core.sessions.splits import split_of
from stretto_core.sessions.state import ToolState
from stretto_core.sessions.store import load_sessions, write_session
from stretto_core.sessions.user_words import USER_TOOL, user_spans

MAIL = ToolManifest.declare("mail", reads=["list_folders", "find_email"], writes=["delete_emails"])
NAMES = ["nadia", "kofi", "leila", "santiago", "fatima", "dmitri", "yuki", "carlos", "olga", "jinsoo"]
SPANS = BindingOptions(user_words="spans")
RETAIL = "tau2/trajectories/retail/gpt-4.1-mini-2025-04-14__toolorchestra_nvidia_2025-12-02__toolorchestra_retail_gpt-5_1trial.json"


def mail_session(n: int, name: str, passed: str | None = None) -> Session:
    """The user names a sender; the agent lists folders, then looks the sender up, then deletes."""
    header = SessionHeader(session_id=f"mail-{n}", harness="h", agent_model="a", app="mail", manifest=MAIL,
                           task_id=f"t{n}")
    who = passed or name
    events = [UserMessage(text=f"I need to get rid of all my emails from {name} from the last {n + 2} days."),
              LLMTurn(calls=[ToolCall(call_id="c1", tool="list_folders")]),
              ToolResult(call_id="c1", tool="list_folders", content='["inbox", "outbox"]'),
              LLMTurn(calls=[ToolCall(call_id="c2", tool="find_email", arguments={"name": who})]),
              ToolResult(call_id="c2", tool="find_email", content=json.dumps({"email": f"{name}@atlas.com"})),
              LLMTurn(calls=[ToolCall(call_id="c3", tool="delete_emails", arguments={"sender": f"{name}@atlas.com"})]),
              ToolResult(call_id="c3", tool="delete_emails", content="deleted"),
              LLMTurn(text="Done.")]
    return Session(header=header, events=events)


def test_a_request_is_cut_into_values_by_shape_and_by_the_word_before_them() -> None:
    spans = user_spans("Delete Peyton Jones from the crm and email bob@x.com about 'Q3 plan' on 2024-05-19", "spans")
    assert spans["email"] == ["bob@x.com"] and spans["date"] == ["2024-05-19"] and spans["quoted"] == ["Q3 plan"]
    assert "Peyton Jones" in spans["name"]
    assert spans["after.email"] == "bob@x.com" and spans["after2.delete"] == "Peyton Jones"
    assert user_spans("emails from nadia", "spans")["after_cap.from"] == "Nadia"


def test_the_pattern_takes_a_shape_only_when_the_request_holds_one_of_it() -> None:
    assert user_spans("order #W123 on 2024-05-19 and 2024-05-20", "pattern") == {"id": "#W123"}
    assert user_spans("nothing to see", "pattern") == {}


def test_the_users_words_join_the_state_as_a_source_only_when_asked() -> None:
    off, on = ToolState(MAIL), ToolState(MAIL, user_source="spans")
    for state in (off, on):
        state.observe_user("emails from nadia")
    assert USER_TOOL not in off.ok_results and off.results == []
    assert on.ok_results[USER_TOOL][0].index.by_path["$.after.from"] == ["nadia"]


def test_a_read_whose_argument_only_the_user_wrote_is_bound_from_their_words() -> None:
    flow = learn([mail_session(n, name) for n, name in enumerate(NAMES)], binding_options=SPANS)
    lookup = flow.table.lookups["find_email"]
    assert lookup.kind == "bound" and lookup.args["name"].sources[0] == "(user) $.after.from"
    state = ToolState(MAIL, user_source="spans")
    state.observe_user("please clear my emails from ana from the last week")
    state.observe_call("c1", "list_folders", {})
    state.observe_result("c1", "list_folders", '["inbox"]', ["inbox"], False)
    binding = bind(flow.table, "find_email", state, "list_folders")
    assert binding is not None and binding.arguments == {"name": "ana"}


def test_the_agents_casing_picks_which_written_form_is_the_source() -> None:
    flow = learn([mail_session(n, name, name.title()) for n, name in enumerate(NAMES)], binding_options=SPANS)
    assert flow.table.lookups["find_email"].args["name"].sources[0] == "(user) $.after_cap.from"


def test_in_replay_the_users_words_save_the_turn_the_flow_without_them_cannot() -> None:
    train = [mail_session(n, name) for n, name in enumerate(NAMES)]
    test = prepare_sessions([mail_session(100 + n, name) for n, name in enumerate(["ana", "ravi", "mei"])])
    options = ReplayOptions(policy="use")
    without = replay_sessions(FlowRuntime(learn(train)), test, options)
    with_words = replay_sessions(FlowRuntime(learn(train, binding_options=SPANS)), test, options)
    assert without.turns_saved == 0 and without.lookups == 0
    assert with_words.turns_saved == 3 and with_words.detours == 0


def test_a_flow_learned_with_the_users_words_says_so_and_is_served_with_them(tmp_path) -> None:
    flow = learn([mail_session(n, name) for n, name in enumerate(NAMES)], binding_options=SPANS)
    save_flow(flow, tmp_path / "f.json")
    loaded = load_flow(tmp_path / "f.json")
    assert loaded.bindings.user_words == "spans" and FlowRuntime(loaded).user_words == "spans"
    plain = learn([mail_session(n, name) for n, name in enumerate(NAMES)])
    assert "user_words" not in plain.to_json() and FlowRuntime(plain).user_words is None


@full_data
def test_a_flow_learned_without_the_users_words_is_the_shipped_flow_byte_for_byte(tmp_path) -> None:
    ingest_files("tau2", [data_root() / RETAIL], tmp_path)
    train = [s for s in load_sessions([tmp_path]) if split_of(s.header) == "train"]
    from stretto_core.evaluate.scripted.episodes import FIXTURES

    assert len(train) == 71
    assert learn(train).to_json() + "\n" == (FIXTURES / "flows" / "tau2-retail.flow.json").read_text(encoding="utf-8")


def test_stretto_learn_takes_the_user_words_option_and_refuses_an_unknown_one(tmp_path) -> None:
    for n, name in enumerate(NAMES):
        write_session(mail_session(n, name), tmp_path / "s")
    ok = CliRunner().invoke(app, ["learn", str(tmp_path / "s"), "--split", "all", "--user-words", "spans",
                                  "--out", str(tmp_path / "f.json")])
    assert ok.exit_code == 0, ok.output
    assert load_flow(tmp_path / "f.json").bindings.user_words == "spans"
    bad = CliRunner().invoke(app, ["learn", str(tmp_path / "s"), "--split", "all", "--user-words", "model",
                                   "--out", str(tmp_path / "g.json")])
    assert bad.exit_code != 0


def test_the_turns_only_the_users_words_put_in_the_ceiling_are_bound_by_the_counted_spans_not_the_pattern() -> None:
    from stretto_core.evaluate.measure.user_words import gap_turns_bound

    train = [mail_session(n, name) for n, name in enumerate(NAMES)]
    [episode] = prepare_sessions([mail_session(100, "ana")])
    flows = {mode: FlowRuntime(learn(train, binding_options=BindingOptions(user_words=mode)))
             for mode in (None, "pattern", "spans")}
    assert {mode: gap_turns_bound(flow, episode) for mode, flow in flows.items()} == {
        None: (1, 0), "pattern": (1, 0), "spans": (1, 1)}
