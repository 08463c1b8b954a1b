"""A learn on a local cluster of 2 workers writes the bytes one process writes, says what each
worker read, and starts its workers from this process (issue 30, goal 6: learning that pays)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from toy_sessions import TOY_MANIFEST, refund_session as _session

from stretto_core.cli import main
from stretto_core.flow.distributed import cluster_counter
from stretto_core.flow.worker_report import ShardCount, by_worker
from stretto_core.sessions.shared import read_into
from stretto_core.sessions.store import LoadReport, write_session

MANIFEST = TOY_MANIFEST
MARK = ["as imported"]
"""Set by a test after import: a worker forked from the test's process sees the new value."""


def _mark() -> str:
    return MARK[0]


def test_two_workers_write_the_bytes_of_one_process_and_say_what_each_read(tmp_path: Path, capsys: Any) -> None:
    pytest.importorskip("distributed")
    folder = tmp_path / "sessions"
    files = [write_session(_session(i), folder) for i in range(12)]
    plain, spread = tmp_path / "plain.flow.json", tmp_path / "spread.flow.json"
    assert main(["learn", str(folder), "--split", "all", "--out", str(plain)]) in (0, None)
    capsys.readouterr()
    assert main(["learn", str(folder), "--split", "all", "--workers", "2", "--out", str(spread)]) in (0, None)
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("read on worker ")]
    assert spread.read_bytes() == plain.read_bytes()
    assert len(said) == 2  # both workers counted a share
    sessions = sum(int(line.split(": ", 1)[1].split(" sessions")[0]) for line in said)
    assert sessions == 12 and all("MB read" in line for line in said)


def test_the_counter_returns_each_workers_report_adding_to_every_byte_read(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from stretto_core.flow.stream import choose

    files = [write_session(_session(i), tmp_path) for i in range(9)]
    chosen = choose([str(tmp_path)], "all")
    assert chosen.manifest is not None
    counter = cluster_counter(chosen.manifest, workers=2)
    try:
        counter(chosen.files, "data")
    finally:
        counter.close()
    reports = counter.reports
    assert len(reports) == 2 and counter.start_s > 0
    assert sum(r.sessions for r in reports) == 9 and sum(r.files for r in reports) == 9
    assert sum(r.bytes_read for r in reports) == sum(f.stat().st_size for f in files)
    assert sum(r.shards for r in reports) == 8  # SHARDS_PER_WORKER shards a worker


FORKED = """
import sys
sys.path.insert(0, sys.argv[1])
import test_learn_workers as here
from stretto_core.flow.distributed import cluster_counter
here.MARK[0] = "set in this process after import"
counter = cluster_counter(here.MANIFEST, workers=1)
try:
    print(counter.dask_client().submit(here._mark, pure=False).result())
finally:
    counter.close()
"""


def test_a_one_thread_process_forks_its_workers_with_its_code_imported() -> None:
    pytest.importorskip("distributed")
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FORKED, str(Path(__file__).parent)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "set in this process after import"


def test_a_process_running_other_threads_spawns_them() -> None:
    import threading

    from stretto_core.flow.distributed import start_method

    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert start_method() == "spawn"  # another thread may hold a lock the fork would copy
    finally:
        stop.set()
        other.join()


def test_reports_of_one_workers_shards_add_up() -> None:
    shards = [ShardCount("{}", "b:2", 3, 3, 300, 0.5, []), ShardCount("{}", "a:1", 2, 1, 200, 0.25, ["x: gone"]),
              ShardCount("{}", "b:2", 4, 4, 400, 0.5, [])]
    a, b = by_worker(shards)
    assert (a.worker, a.files, a.sessions, a.bytes_read, a.problems) == ("a:1", 2, 1, 200, ["x: gone"])
    assert (b.worker, b.shards, b.files, b.sessions, b.bytes_read, b.cpu_s) == ("b:2", 2, 7, 7, 700, 1.0)
    assert "1 problems" in a.line() and "7 sessions from 7 files" in b.line()


def test_a_session_read_from_a_store_by_url_counts_its_bytes(tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    path = write_session(_session(5), tmp_path)
    fsspec.filesystem("memory").pipe("/h35c-bytes/one.jsonl", path.read_bytes())
    report = LoadReport()
    assert read_into(report, "memory://h35c-bytes/one.jsonl") is not None
    assert (report.sessions_read, report.bytes_read) == (1, path.stat().st_size)


def test_a_sessions_fingerprint_does_not_hang_on_the_file_read_before_it(tmp_path: Path) -> None:
    from stretto_core.sessions.fingerprint import session_fingerprint
    from stretto_core.sessions.shared import session_at

    first = write_session(_session(1), tmp_path / "a")
    second = write_session(_session(2), tmp_path / "b")
    for path, args in ((first, {"order_id": "string", "reason": "string"}),
                       (second, {"reason": "string", "order_id": "string"})):  # equal, but in another order
        header, rest = path.read_text(encoding="utf-8").split("\n", 1)
        head = json.loads(header)
        head["manifest"]["tools"]["refund"]["contract"] = {"args": args}
        path.write_text(json.dumps(head) + "\n" + rest, encoding="utf-8")
    session_at(str(first))  # its manifest, in the first order, read just before
    after_first = session_at(str(second))
    after_itself = session_at(str(second))
    refund = after_first.header.manifest.tools["refund"] if after_first.header.manifest else None
    assert refund is not None and refund.contract is not None
    assert list(refund.contract.args) == ["reason", "order_id"]  # as its file writes it
    assert session_fingerprint(after_first) == session_fingerprint(after_itself)
