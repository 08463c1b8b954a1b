"""A deployment's versions: `stretto flow stage | commit | rollback | log` on sessions an app recorded.

Staging adds only new sessions and equals learning them all at once, byte for byte; a commit
stamps the next version and keeps its file in the history; a rollback puts the previous file
back byte for byte; a commit with nothing staged, staged on another version, or of another app,
is refused in one line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app_sessions import app_stretto, serve_app
from stretto_core.cli import main
from stretto_core.flow.history import Deployment
from stretto_core.flow.ir import load_flow, save_flow
from stretto_core.sessions.store import load_sessions


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def record(dep: Path, customers, tag: str = "s", **options) -> None:
    serve_app(app_stretto(dep / "flow.json", dep / "sessions", **options), customers, tag)


def learned_at_once(dep: Path, out: Path, capsys) -> bytes:
    code, _, err = cli(capsys, "learn", str(dep / "sessions"), "--out", str(out))
    assert code == 0, err
    return out.read_bytes()


def test_staging_as_sessions_arrive_equals_learning_them_all_at_once_byte_for_byte(tmp_path: Path, capsys) -> None:
    dep = tmp_path / "shop"
    record(dep, range(0, 6))
    code, out, err = cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    assert code == 0 and "6 new sessions added" in out, err
    record(dep, range(6, 10))
    code, out, _ = cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    assert code == 0 and "4 new sessions added" in out
    assert (dep / "flow.staged.json").read_bytes() == learned_at_once(dep, tmp_path / "batch.json", capsys)
    code, out, _ = cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    assert code == 0 and "nothing new" in out


def test_a_session_still_recording_waits_for_the_next_stage(tmp_path: Path, capsys) -> None:
    dep = tmp_path / "shop"
    record(dep, range(0, 3))
    code, out, _ = cli(capsys, "flow", "stage", str(dep))
    assert code == 0 and "nothing new" in out, "files written seconds ago may still be recording"
    old = 1_000_000_000
    for path in (dep / "sessions").iterdir():
        os.utime(path, (old, old))
    code, out, _ = cli(capsys, "flow", "stage", str(dep))
    assert "3 new sessions added" in out


def test_commit_stamps_the_next_version_and_rollback_restores_the_previous_file_byte_for_byte(
        tmp_path: Path, capsys) -> None:
    dep = tmp_path / "shop"
    record(dep, range(0, 5))
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    code, out, err = cli(capsys, "flow", "commit", str(dep))
    assert code == 0 and "committed version 1" in out, err
    first = (dep / "flow.json").read_bytes()
    assert load_flow(dep / "flow.json").provenance.version == 1 and not (dep / "flow.staged.json").exists()
    record(dep, range(5, 12), "t")
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    code, out, _ = cli(capsys, "flow", "commit", str(dep))
    assert code == 0 and "committed version 2" in out
    second = (dep / "flow.json").read_bytes()
    assert second != first and (dep / "history" / "v000002.flow.json").read_bytes() == second
    code, out, _ = cli(capsys, "flow", "rollback", str(dep))
    assert code == 0 and "version 2 rolled back to 1" in out
    assert (dep / "flow.json").read_bytes() == first
    code, _, err = cli(capsys, "flow", "rollback", str(dep))
    assert code != 0 and "no earlier committed version" in err and "Traceback" not in err
    assert (dep / "flow.json").read_bytes() == first
    code, out, _ = cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    assert "7 new sessions added" in out, "the sessions of the version rolled back are counted again"
    code, out, _ = cli(capsys, "flow", "log", str(dep))
    assert [line.split()[2] for line in out.splitlines() if line[:1].isdigit()] == \
        ["stage", "commit", "stage", "commit", "rollback", "stage"]
    entries = Deployment(dep).entries()
    assert entries[3].sessions_added and entries[3].sha256 == __import__("hashlib").sha256(second).hexdigest()


def test_commit_refuses_when_nothing_is_staged_or_the_app_differs(tmp_path: Path, capsys) -> None:
    dep = tmp_path / "shop"
    (dep / "sessions").mkdir(parents=True)
    code, _, err = cli(capsys, "flow", "commit", str(dep))
    assert code != 0 and "nothing is staged" in err and len(err.strip().splitlines()) == 1
    record(dep, range(0, 4))
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    code, _, err = cli(capsys, "flow", "commit", str(dep), "--app", "other/app")
    assert code != 0 and "not other/app" in err and not (dep / "flow.json").exists()
    code, out, _ = cli(capsys, "flow", "commit", str(dep), "--app", "demo/shop")
    assert code == 0, out
    record(dep, range(4, 6), "other", app="another/app")
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    code, _, err = cli(capsys, "flow", "commit", str(dep))
    assert code != 0 and "another/app" in err and load_flow(dep / "flow.json").provenance.version == 1
    assert Deployment(dep).version() == 1


def test_a_commit_staged_on_a_version_rolled_back_is_refused(tmp_path: Path, capsys) -> None:
    dep = tmp_path / "shop"
    record(dep, range(0, 3))
    for tag in ("a", "b"):
        record(dep, range(3, 5), tag)
        cli(capsys, "flow", "stage", str(dep), "--settled", "0")
        cli(capsys, "flow", "commit", str(dep))
    record(dep, range(5, 7), "c")
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    cli(capsys, "flow", "rollback", str(dep))
    code, _, err = cli(capsys, "flow", "commit", str(dep))
    assert code != 0 and "nothing is staged" in err, "a rollback drops what was staged on the version it undid"
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    (dep / "history" / "log.jsonl").open("a").write(json.dumps(  # a rollback that left the staged file
        {"command": "rollback", "at": "2026-01-01T00:00:00Z", "version": 1, "parent": 1}) + "\n")
    code, _, err = cli(capsys, "flow", "commit", str(dep))
    assert code != 0 and "staged before the latest rollback (version 1 is committed now); stage again" in err


def test_a_flow_learned_before_any_history_is_adopted_as_version_one(tmp_path: Path, capsys) -> None:
    dep = tmp_path / "shop"
    record(dep, range(0, 5))
    learned_at_once(dep, dep / "flow.json", capsys)
    record(dep, range(5, 8), "later")  # served by the learned flow: `said` teaches them as `learn` does
    code, out, _ = cli(capsys, "flow", "stage", str(dep), "--settled", "0", "--rule", "said")
    assert code == 0 and "3 new sessions added" in out and "on version 1" in out
    cli(capsys, "flow", "commit", str(dep))
    assert (dep / "flow.json").read_bytes() != (dep / "history" / "v000001.flow.json").read_bytes()
    batch = learned_at_once(dep, tmp_path / "batch.json", capsys)
    committed = load_flow(dep / "flow.json")
    committed.provenance.version = None
    assert (committed.to_json() + "\n").encode() == batch


def test_a_served_session_is_staged_as_the_rule_teaches_it(tmp_path: Path, capsys) -> None:
    dep = tmp_path / "shop"
    record(dep, range(0, 8))
    learned_at_once(dep, dep / "flow.json", capsys)
    record(dep, range(8, 12), "served", theta=0.0)
    staged = {}
    for rule in ("drop", "all"):
        copy = __import__("shutil").copytree(dep, tmp_path / rule)  # file times kept: the same adoption
        code, out, err = cli(capsys, "flow", "stage", str(copy), "--settled", "0", "--rule", rule)
        assert code == 0 and "4 new sessions added" in out, err
        staged[rule] = (copy / "flow.staged.json").read_bytes()
    assert staged["drop"] != staged["all"], "the rule changes what a served session teaches"
    code, _, err = cli(capsys, "flow", "stage", str(dep), "--rule", "everything")
    assert code != 0 and "--served-rule is one of" in err


def test_every_flow_write_replaces_the_file_whole(tmp_path: Path) -> None:
    dep = tmp_path / "shop"
    record(dep, range(0, 3))
    path = dep / "flow.json"
    save_flow(load_flow_of(dep), path)
    inode = path.stat().st_ino
    save_flow(load_flow_of(dep), path)
    assert path.stat().st_ino != inode, "a new file renamed over the old one, never written in place"
    assert not [p for p in dep.iterdir() if p.name.endswith(".tmp")]


def load_flow_of(dep: Path):
    from stretto_core.flow.ir import learn
    from stretto_core.demo.shop import SHOP_MANIFEST

    return learn(load_sessions([dep / "sessions"]), SHOP_MANIFEST)


@pytest.mark.parametrize("kind", [k for k in __import__("test_cli_bad_inputs").BAD if k != "missing"])
@pytest.mark.parametrize("which", ["flow.json", "flow.staged.json"])
def test_a_bad_flow_in_the_deployment_is_one_line_naming_it(tmp_path: Path, capsys, kind: str, which: str) -> None:
    from test_cli_bad_inputs import BAD, assert_one_line_error

    dep = tmp_path / "shop"
    record(dep, range(0, 3))
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    cli(capsys, "flow", "commit", str(dep))
    record(dep, range(3, 5), "more")
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    verb = "commit" if which == "flow.staged.json" else "stage"
    if verb == "stage":
        record(dep, range(5, 6), "later")
    path = dep / which
    good = path.read_text(encoding="utf-8")
    path.unlink()
    BAD[kind](path, good)
    code = main(["flow", verb, str(dep), "--settled", "0"] if verb == "stage" else ["flow", verb, str(dep)])
    assert_one_line_error(code, capsys.readouterr(), which)


def test_a_torn_or_bad_history_line_is_skipped_and_a_bad_option_is_one_line(tmp_path: Path, capsys) -> None:
    dep = tmp_path / "shop"
    record(dep, range(0, 3))
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    with (dep / "history" / "log.jsonl").open("ab") as fh:
        fh.write(b"[" * 100_000 + b"\n" + bytes(range(256)) + b"\n" + b'{"command": "comm')
    code, out, _ = cli(capsys, "flow", "log", str(dep))
    assert code == 0 and " stage " in out
    code, out, err = cli(capsys, "flow", "commit", str(dep))
    assert code == 0, err
    code, _, err = cli(capsys, "flow", "stage", str(dep), "--settled", "nan")
    assert code != 0 and "--settled" in err and "Traceback" not in err


def committed_deployment(tmp_path: Path, capsys, sessions: int) -> Path:
    """A deployment whose first `sessions` recorded sessions are staged and committed."""
    dep = tmp_path / "shop"
    record(dep, range(0, sessions))
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    cli(capsys, "flow", "commit", str(dep))
    return dep


def watch_reads(monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    """From now on: each flow file a deployment reads (its name, read as written or not), and each derive."""
    from stretto_core.flow import history
    from stretto_core.flow.ir import Flow

    loads: list = []
    derives: list = []
    load, derive = history.load_flow_bytes, Flow.derive
    monkeypatch.setattr(history, "load_flow_bytes", lambda data, path, **how: loads.append(
        (Path(path).name, how.get("written_here"))) or load(data, path, **how))
    monkeypatch.setattr(Flow, "derive", lambda self: derives.append(1) or derive(self))
    return loads, derives


def test_a_stage_reads_the_committed_flow_once_derives_the_sum_once_and_writes_the_batch_learns_bytes(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    dep = committed_deployment(tmp_path, capsys, 4)
    record(dep, range(4, 6), "t")
    loads, derives = watch_reads(monkeypatch)
    code, out, err = cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    assert code == 0 and "2 new sessions added" in out, err
    # the committed flow is read once, for the base and the diff, and not derived again (the log
    # names its bytes: the commit wrote them); the new sessions' counts are not derived alone:
    # the sum is, once
    assert loads == [("flow.json", True)] and len(derives) == 1
    monkeypatch.undo()
    assert (dep / "flow.staged.json").read_bytes() == learned_at_once(dep, tmp_path / "batch.json", capsys)
    record(dep, range(6, 7), "u")
    loads, derives = watch_reads(monkeypatch)
    code, out, _ = cli(capsys, "flow", "stage", str(dep), "--settled", "0")  # on the staged flow, added in place
    assert code == 0 and "1 new sessions added" in out
    # the staged flow (the base) and the committed one (the diff's) read as written, the sum derived once
    assert loads == [("flow.staged.json", True), ("flow.json", True)] and len(derives) == 1
    monkeypatch.undo()
    assert (dep / "flow.staged.json").read_bytes() == learned_at_once(dep, tmp_path / "batch2.json", capsys)
    assert load_flow(dep / "flow.json").provenance.version == 1, "the committed flow is left as it was"


def test_a_flow_file_edited_since_the_log_named_it_is_derived_again_and_refused(tmp_path: Path, capsys) -> None:
    # only bytes whose SHA-256 the log holds skip the derive: an edit of a derived part (here α's
    # posterior median) gives other bytes, is derived again, and is refused as it always was
    dep = tmp_path / "shop"
    record(dep, range(0, 3))
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    staged = dep / "flow.staged.json"
    data = json.loads(staged.read_text(encoding="utf-8"))
    data["alpha"]["alpha"] *= 2.0
    staged.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    code, _, err = cli(capsys, "flow", "commit", str(dep))
    assert code != 0 and "flow.staged.json" in err and "alpha" in err and "Traceback" not in err
    assert not (dep / "flow.json").exists()


def test_a_stage_checks_no_number_of_the_flows_its_log_names_but_every_number_of_one_edited_since(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    from stretto_core.flow import checks

    dep = committed_deployment(tmp_path, capsys, 3)
    record(dep, range(3, 5), "t")
    cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    record(dep, range(5, 6), "u")
    checked = []
    number_problems = checks.number_problems
    monkeypatch.setattr(checks, "number_problems", lambda data: checked.append(1) or number_problems(data))
    code, out, err = cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    assert code == 0 and "1 new sessions added" in out, err
    assert checked == []  # the staged base and the committed flow: both the log's bytes
    staged = dep / "flow.staged.json"
    data = json.loads(staged.read_text(encoding="utf-8"))
    data["contracts"]["calls"] = {tool: -1.0 for tool in data["contracts"]["calls"]}
    staged.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    record(dep, range(6, 7), "v")
    code, _, err = cli(capsys, "flow", "stage", str(dep), "--settled", "0")
    assert checked and code != 0 and "flow.staged.json" in err and "contracts.calls" in err and "Traceback" not in err
