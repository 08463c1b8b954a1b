"""Private by default: files stretto writes are 0600 in 0700 folders (or keep the mode of what they
replace), and credentials on a server's command line or in a log line become `<redacted>`."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from stretto_core.private import append_private, private_dir, write_private_text
from stretto_core.sessions.credentials import RedactingFilter, is_secret_name, redact_command, redact_text

SECRETS = ["sk-live-abcdef1234567890XYZ", "hunter2", "tok9f8e7d6c5b4a", "ghp_0123456789abcdefghijABCDEFGHIJ"]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def common_umask():
    """The umask most systems run with (022), under which a plain `open` makes a world-readable file."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_new_file_is_0600_in_new_0700_folders_under_a_common_umask(tmp_path: Path, common_umask) -> None:
    path = write_private_text(tmp_path / "a" / "b" / "flow.json", "{}\n")
    assert mode(path) == 0o600
    assert mode(tmp_path / "a") == 0o700 and mode(tmp_path / "a" / "b") == 0o700
    with append_private(tmp_path / "c" / "trace.jsonl") as fh:
        fh.write("x\n")
    assert mode(tmp_path / "c" / "trace.jsonl") == 0o600 and mode(tmp_path / "c") == 0o700


def test_a_replaced_file_keeps_its_mode_and_an_existing_folder_keeps_its_own(tmp_path: Path, common_umask) -> None:
    shared = tmp_path / "shared.json"
    shared.write_text("old")
    os.chmod(shared, 0o644)  # the operator opened it up on purpose
    write_private_text(shared, "new")
    assert shared.read_text() == "new" and mode(shared) == 0o644
    os.chmod(tmp_path, 0o755)
    private_dir(tmp_path)
    assert mode(tmp_path) == 0o755


def test_sessions_flows_and_manifests_stretto_writes_are_not_readable_by_others(tmp_path: Path, common_umask) -> None:
    from stretto_core import Session, SessionHeader, ToolManifest, learn_flow, save_flow
    from stretto_core.sessions.store import write_session
    from stretto_core.sessions.manifest import save_manifest
    from stretto_core.sessions.model import LLMTurn, ToolCall, ToolResult
    from stretto_core.sessions.recorder import SessionRecorder

    header = SessionHeader(session_id="s1", harness="test")
    session = Session(header=header, events=[LLMTurn(calls=[ToolCall(call_id="c", tool="get", arguments={})]),
                                             ToolResult(call_id="c", tool="get", content="ok")])
    written = write_session(session, tmp_path / "store")
    with SessionRecorder(tmp_path / "live", header.model_copy(update={"session_id": "s2"})) as recorder:
        recorder.record(LLMTurn(text="hi"))
    flow, manifest = tmp_path / "flows" / "f.json", tmp_path / "m.json"
    save_flow(learn_flow([session], ToolManifest.declare(reads=["get"])), flow)
    save_manifest(ToolManifest.declare(reads=["get"]), manifest)
    files = [written, *(tmp_path / "live").glob("*.jsonl"), flow, manifest]
    assert len(files) == 4
    assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
    assert all(mode(d) == 0o700 for d in (tmp_path / "store", tmp_path / "live", tmp_path / "flows"))


def test_credentials_on_a_command_line_are_redacted_and_the_rest_kept() -> None:
    command = ["npx", "-y", "@acme/server", "--api-key", SECRETS[0], "--dsn", "postgres://admin:hunter2@db:5432/shop",
               f"--token={SECRETS[2]}", "GITHUB_TOKEN=" + SECRETS[3], "--repository", "/srv/repo", "--author", "Jo"]
    clean = redact_command(command)
    assert not any(secret in " ".join(clean) for secret in SECRETS)
    assert clean == ["npx", "-y", "@acme/server", "--api-key", "<redacted>", "--dsn", "<redacted>",
                     "--token=<redacted>", "GITHUB_TOKEN=<redacted>", "--repository", "/srv/repo", "--author", "Jo"]


@pytest.mark.parametrize("text, kept", [
    ("postgres://admin:hunter2@db/x", "postgres://admin:<redacted>@db/x"),
    ("https://api.example.org/v1?api_key=abc123&page=2", "https://api.example.org/v1?api_key=<redacted>&page=2"),
    ("Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer <redacted>"),
    ("key sk-proj-abcdefghijklmnop1234", "key <redacted>"),
    ("https://ghp_0123456789abcdefghijABCDEFGHIJ@github.com/x", "https://<redacted>@github.com/x"),
    ("python -m server --port 8080 /data/orders.db", "python -m server --port 8080 /data/orders.db"),
    ("the order O123 of user@example.org", "the order O123 of user@example.org"),
])
def test_text_is_redacted_only_where_a_credential_stands(text: str, kept: str) -> None:
    assert redact_text(text) == kept


@pytest.mark.parametrize("name, secret", [("api-key", True), ("DB_PASSWORD", True), ("authToken", True),
                                          ("x-api-key", True), ("client_secret", True), ("author", False),
                                          ("design", False), ("keyboard", False), ("passthrough", False),
                                          ("repository", False)])
def test_a_name_says_secret_only_when_it_does(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_a_log_line_quoting_a_command_is_redacted_by_the_filter() -> None:
    record = logging.LogRecord("stretto.proxy", logging.ERROR, __file__, 1, "cannot start the server %s: %s",
                               ("srv --api-key " + SECRETS[0], "no such file"), None)
    assert RedactingFilter().filter(record)
    assert record.getMessage() == "cannot start the server srv --api-key <redacted>: no such file"
