"""One session, one file: different session ids never share a file, and long ids still fit a file name."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from stretto_core.errors import InputError
from stretto_core.sessions.files import MAX_NAME_BYTES, session_filename
from stretto_core.sessions.model import Session, SessionHeader, UserMessage
from stretto_core.sessions.recorder import SessionRecorder
from stretto_core.sessions.store import SessionStore, read_session, write_session

LOOKALIKES = [("tenant/A", "tenant_A"), ("order#1", "order?1"), ("x" * 200 + "a", "x" * 200 + "b"),
              ("café", "cafe\u0301"), ("a b", "a_b")]


def session(session_id: str, text: str = "hi") -> Session:
    return Session(header=SessionHeader(session_id=session_id, harness="test"), events=[UserMessage(text=text)])


@pytest.mark.parametrize("a,b", LOOKALIKES)
def test_two_session_ids_that_sanitize_alike_get_two_files(a: str, b: str) -> None:
    assert session_filename(a) != session_filename(b)


def test_ids_that_are_already_safe_keep_the_file_name_they_always_had() -> None:
    for sid in ["ep-42", "tau2-retail-gpt-4.1-tau2-1a2b3c4d-12-t0-3", "a=b+c@d_e.f", "x" * 200]:
        assert session_filename(sid) == sid + ".jsonl"


def test_a_file_name_fits_in_255_bytes_whatever_the_id() -> None:
    for sid in ["任务" * 200, "é" * 300, "/" * 1000, "x" * 5000, "😀" * 100]:
        name = session_filename(sid)
        assert len(name.encode("utf-8")) <= MAX_NAME_BYTES + len(".jsonl") <= 255
        # the store's temp name and the recorder's fallback name must fit as well
        assert len((name + ".tmp4194304").encode()) <= 255
        assert len((Path(name).stem + ".abcdefgh.jsonl").encode()) <= 255


def test_a_cjk_task_id_writes_and_reads_back(tmp_path: Path) -> None:
    sid = "tau2-retail-" + "退货请求" * 60
    path = write_session(session(sid), tmp_path)
    assert read_session(path).session_id == sid


@pytest.mark.parametrize("a,b", LOOKALIKES)
def test_the_store_never_overwrites_one_session_with_another(tmp_path: Path, a: str, b: str) -> None:
    store = SessionStore(tmp_path)
    store.write(session(a, "from a"))
    store.write(session(b, "from b"))
    read = {s.session_id: s.events[0].text for s in store.iter_sessions()}
    assert read == {a: "from a", b: "from b"}


@pytest.mark.parametrize("a,b", LOOKALIKES)
def test_two_recorders_of_lookalike_ids_write_two_sessions(tmp_path: Path, a: str, b: str) -> None:
    for sid in (a, b):
        with SessionRecorder(tmp_path, SessionHeader(session_id=sid, harness="test")) as rec:
            rec.user(f"from {sid}")
    read = {s.session_id: [e.text for e in s.events] for s in SessionStore(tmp_path).iter_sessions()}
    assert read == {a: [f"from {a}"], b: [f"from {b}"]}


def test_the_recorder_refuses_to_append_to_a_file_whose_header_names_another_session(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # a file left by an older stretto, whose names were not unique, holds another session
    squatter = tmp_path / session_filename("tenant_A")
    write_session(session("tenant/A", "someone else's"), tmp_path).rename(squatter)
    with caplog.at_level(logging.WARNING, logger="stretto.recorder"):
        with SessionRecorder(tmp_path, SessionHeader(session_id="tenant_A", harness="test")) as rec:
            rec.user("mine")
    assert read_session(squatter).session_id == "tenant/A"
    assert [e.text for e in read_session(squatter).events] == ["someone else's"]
    assert rec.path != squatter and read_session(rec.path).session_id == "tenant_A"
    assert [e.text for e in read_session(rec.path).events] == ["mine"]
    assert any("tenant/A" in r.getMessage() for r in caplog.records)


def test_writing_a_session_over_a_file_of_another_session_is_an_error(tmp_path: Path) -> None:
    squatter = tmp_path / session_filename("tenant_A")
    write_session(session("tenant/A"), tmp_path).rename(squatter)
    with pytest.raises(InputError, match="tenant/A"):
        write_session(session("tenant_A"), tmp_path)
    assert read_session(squatter).session_id == "tenant/A"


def test_ingest_of_an_episode_with_a_cjk_task_id_writes_its_session(tmp_path: Path) -> None:
    import json

    from stretto_core.sessions.ingest import ingest_files
    from stretto_core.sessions.store import load_sessions

    source = tmp_path / "retail" / "gpt-x__results__run.json"
    source.parent.mkdir()
    task = "退货请求" * 50
    source.write_text(json.dumps({"info": {"environment_info": {"domain_name": "retail"}}, "simulations": [
        {"task_id": task, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]}]}))
    report = ingest_files("tau2", [source], tmp_path / "out")
    assert report.sessions_written == 1
    [session] = load_sessions([tmp_path / "out"])
    assert session.header.task_id == task
