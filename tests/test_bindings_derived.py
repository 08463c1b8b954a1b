"""Derived bindings: a path joined from the folder the agent listed and a name the listing gave,
a sha found in a line of free text, and a record field with a constant, learned by counting and
served by the binder; never a value the user wrote."""

from __future__ import annotations

from typing import Any

from stretto_core import ToolManifest, learn_flow
from stretto_core.flow.review import show
from stretto_core.learn.bindings import BindingCounts, add_session, compile_table
from stretto_core.learn.bindings.derived import Pools, derived_pick, parse_template, text_candidates
from stretto_core.serve.bind import bind
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage
from stretto_core.sessions.state import ToolState

FS = ToolManifest.declare("fs", reads=["list_directory", "read_text_file"], writes=["write_file"])
GIT = ToolManifest.declare("git", reads=["git_log", "git_show"], writes=["git_commit"])
SHOP = ToolManifest.declare("shop", reads=["get_user", "get_doc"], writes=["cancel"])

SHAS = ["3f2a9c1e", "77b01d4a", "c0ffee12", "9e8d7c6b", "1a2b3c4d", "5e6f7a8b", "0d1e2f3a", "4b5c6d7e"]


def _session(sid: str, steps: list[tuple[str, dict[str, Any], str]], manifest: ToolManifest,
             said: str = "please have a look") -> Session:
    events: list[Any] = [UserMessage(text=said)]
    for n, (tool, args, content) in enumerate(steps):
        events += [LLMTurn(calls=[ToolCall(call_id=f"c{n}", tool=tool, arguments=args)]),
                   ToolResult(call_id=f"c{n}", tool=tool, content=content)]
    return Session(header=SessionHeader(session_id=sid, harness="test", app=manifest.app, manifest=manifest),
                   events=events)


def listing(i: int) -> str:
    return f"[DIR] drafts\n[FILE] notes-{i}.md\n[FILE] plan.txt\n[FILE] zeta-{i}.csv"


def fs_session(i: int) -> Session:
    folder = f"/srv/work/project-{i}/docs"
    return _session(f"fs-{i}", [("list_directory", {"path": folder}, listing(i)),
                                ("read_text_file", {"path": f"{folder}/notes-{i}.md"}, f"# notes {i}"),
                                ("read_text_file", {"path": f"{folder}/plan.txt"}, "the plan")], FS)


def git_log(i: int) -> str:
    entries = [f"Commit: {SHAS[(i + k) % len(SHAS)]}{i:04d}\nAuthor: dev <d@x.org>\nDate: 2026-01-0{k + 1}\n"
               f"Message: change {k}\n" for k in range(3)]
    return "Commit history:\n" + "\n".join(entries)


def git_session(i: int) -> Session:
    repo = f"/srv/repos/r{i}"
    first = f"{SHAS[i % len(SHAS)]}{i:04d}"
    return _session(f"git-{i}", [("git_log", {"repo_path": repo}, git_log(i)),
                                 ("git_show", {"repo_path": repo, "revision": first}, f"commit {first}\n...")], GIT)


def test_a_path_joined_from_the_listed_folder_and_a_listed_name_is_learned_and_served() -> None:
    flow = learn_flow([fs_session(i) for i in range(12)], FS)
    arg = flow.table.lookups["read_text_file"].args["path"]
    assert flow.table.lookups["read_text_file"].kind == "bound"
    assert arg.mode == "derived"
    assert arg.template == "{arg list_directory path}/{text list_directory [FILE] }"
    assert arg.pooled > 0.8  # every pick in training was the agent's own: 24 of 24
    state = ToolState(FS, served=True, keep_text=frozenset({"list_directory"}))
    state.observe_call("x", "list_directory", {"path": "/home/new/place"})
    state.observe_result("x", "list_directory", "[DIR] a\n[FILE] readme.md\n[FILE] b.txt", None, False)
    first = bind(flow.table, "read_text_file", state, "list_directory")
    assert first is not None and first.arguments == {"path": "/home/new/place/readme.md"}
    assert first.sources == [arg.template]
    state.observe_lookup("l1", "read_text_file", first.arguments, "hello")
    second = bind(flow.table, "read_text_file", state, "read_text_file")
    assert second is not None and second.arguments == {"path": "/home/new/place/b.txt"}


def test_a_sha_in_a_line_of_free_text_is_learned_with_the_repo_the_agent_passed() -> None:
    flow = learn_flow([git_session(i) for i in range(12)], GIT)
    lookup = flow.table.lookups["git_show"]
    assert lookup.kind == "bound"
    assert lookup.args["revision"].template == "{text git_log Commit: }"
    assert lookup.args["repo_path"].template == "{arg git_log repo_path}"
    state = ToolState(GIT, served=True, keep_text=frozenset({"git_log"}))
    state.observe_call("x", "git_log", {"repo_path": "/tmp/other"})
    state.observe_result("x", "git_log", "Commit history:\nCommit: abcdef01\nAuthor: a\n\nCommit: 12345678\n",
                         None, False)
    got = bind(flow.table, "git_show", state, "git_log")
    assert got is not None and got.arguments == {"repo_path": "/tmp/other", "revision": "abcdef01"}


def test_main_learns_nothing_from_such_sessions_so_these_lookups_are_new() -> None:
    """Before derived bindings, both lookups were unbound: the exact sources hold neither value."""
    counts = BindingCounts()
    for i in range(12):
        add_session(counts, fs_session(i), FS)
    for lookup in counts.lookups.values():
        for arg in lookup.args.values():
            arg.derived = None
    table = compile_table(counts)
    assert table.lookups["read_text_file"].kind == "unbound"


def test_a_record_field_with_a_constant_suffix_is_a_template() -> None:
    sessions = []
    for i in range(10):
        user = f'{{"user_id": "u{i}", "name": "N", "docs": [{{"slug": "guide-{i}"}}, {{"slug": "faq"}}]}}'
        sessions.append(_session(f"s-{i}", [("get_user", {"user_id": f"u{i}"}, user),
                                            ("get_doc", {"file": f"guide-{i}.json"}, "{}")], SHOP,
                                 said=f"I am u{i}"))
    flow = learn_flow(sessions, SHOP)
    assert flow.table.lookups["get_doc"].args["file"].template == "{path get_user $.docs[*].slug}.json"


def test_a_folder_the_user_wrote_is_never_a_literal_of_the_flow() -> None:
    """The agent reads from a folder it never listed: a literal prefix, unless the user wrote it."""
    def sessions(said: str) -> list[Session]:
        return [_session(f"u-{i}", [("list_directory", {"path": "/srv/x"}, listing(i)),
                                    ("read_text_file", {"path": f"/home/alice/notes-{i}.md"}, "n")], FS,
                         said=said) for i in range(8)]

    unsaid = learn_flow(sessions("read my notes please"), FS).bindings.lookups["read_text_file"].args["path"]
    assert unsaid.derived is not None and "/home/alice/{text list_directory [FILE] }" in unsaid.derived.templates
    said = learn_flow(sessions("read my notes in /home/alice please"), FS)
    derived = said.bindings.lookups["read_text_file"].args["path"].derived
    assert derived is None or not any("alice" in key for key in derived.templates)


def test_a_template_the_agent_rarely_follows_gets_a_low_rho() -> None:
    """The agent reads the last listed file: the first-listed pick is wrong at every call."""
    sessions = []
    for i in range(12):
        folder = f"/d/{i}"
        sessions.append(_session(f"z-{i}", [("list_directory", {"path": folder}, listing(i)),
                                            ("read_text_file", {"path": f"{folder}/zeta-{i}.csv"}, "z")], FS))
    arg = learn_flow(sessions, FS).table.lookups["read_text_file"].args["path"]
    assert arg.mode == "derived" and arg.pooled < 0.1


def test_text_candidates_read_anchored_tokens_and_skip_json() -> None:
    state = ToolState(FS)
    state.observe_call("a", "list_directory", {"path": "/x"})
    entry = state.observe_result("a", "list_directory", "[FILE] a b.txt\n[DIR] c", None, False)
    assert ("text", "[FILE] ", "a") in text_candidates(entry)
    assert ("line", "[FILE] ", "a b.txt") in text_candidates(entry)
    state.observe_call("b", "list_directory", {"path": "/y"})
    json_entry = state.observe_result("b", "list_directory", '{"name": "a.txt"}', None, False)
    assert text_candidates(json_entry) == []
    template = parse_template("{arg list_directory path}/{line list_directory [FILE] }")
    assert derived_pick(template, Pools(state), frozenset()) == "/y/a b.txt"


def test_flow_show_renders_a_derived_argument() -> None:
    text = show(learn_flow([fs_session(i) for i in range(12)], FS))
    assert "path (derived" in text and "{arg list_directory path}/{text list_directory [FILE] }" in text


def test_counts_with_templates_round_trip_as_version_4_and_plain_ones_stay_version_3() -> None:
    counts = BindingCounts()
    add_session(counts, git_session(1), GIT)
    add_session(counts, git_session(2), GIT)
    text = counts.to_json()
    assert '"stretto_binding_counts":4' in text
    assert BindingCounts.from_json(text).to_json() == text
    plain = BindingCounts()
    add_session(plain, _session("p", [("git_log", {"repo_path": "/r"}, "Commit: abc")], GIT), GIT)
    assert '"derived"' not in plain.to_json() and '"stretto_binding_counts":3' in plain.to_json()


def test_a_template_composed_in_one_session_only_is_never_served() -> None:
    one = learn_flow([fs_session(0)], FS)
    assert one.bindings.lookups["read_text_file"].args["path"].derived is not None  # counted: 2 values
    assert one.table.lookups["read_text_file"].kind == "unbound"
    two = learn_flow([fs_session(0), fs_session(1)], FS)
    assert two.table.lookups["read_text_file"].args["path"].mode == "derived"


def test_a_flow_file_with_derived_counts_says_version_4_and_reads_back(tmp_path) -> None:
    from stretto_core import load_flow, save_flow

    flow = learn_flow([fs_session(i) for i in range(4)], FS)
    save_flow(flow, tmp_path / "f.json")
    assert '"stretto_binding_counts": 4' in (tmp_path / "f.json").read_text().replace('":4', '": 4')
    again = load_flow(tmp_path / "f.json")
    assert again.table.lookups["read_text_file"].args["path"].mode == "derived"
