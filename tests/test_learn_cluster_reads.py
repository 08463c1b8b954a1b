"""A cluster learn whose workers cannot read the chosen files fails, saying how many sessions they
counted and why, and writes no flow; each worker's read report comes back (issue 26, item 13)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from toy_sessions import TOY_MANIFEST, refund_session as _session

from stretto_core.cli import main
from stretto_core.flow.distributed import _count_shard
from stretto_core.learn.bindings.model import DEFAULT_OPTIONS
from stretto_core.sessions.store import write_session

MANIFEST = TOY_MANIFEST


def test_a_workers_read_report_names_what_it_could_not_read(tmp_path: Path) -> None:
    good = write_session(_session(1), tmp_path)
    shard = _count_shard([str(good), str(tmp_path / "gone.jsonl")], MANIFEST.model_dump_json(), None, False,
                         "data", DEFAULT_OPTIONS)
    assert shard.sessions == 1 and len(shard.problems) == 1 and "gone.jsonl" in shard.problems[0]
    assert shard.files == 2 and shard.bytes_read == good.stat().st_size


def test_workers_that_cannot_read_a_memory_store_fail_the_learn(tmp_path: Path, capsys: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    # spawned, like workers on other machines: a forked worker would start with a copy of this store
    monkeypatch.setattr("stretto_core.flow.distributed.start_method", lambda: "spawn")
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    for i in range(4):
        path = write_session(_session(i), tmp_path / "local")
        fs.pipe(f"/h26c-unread/{path.name}", path.read_bytes())
    out = tmp_path / "toy.flow.json"
    code = main(["learn", "memory://h26c-unread", "--split", "all", "--workers", "2", "--out", str(out)])
    err = capsys.readouterr().err
    assert code != 0 and not out.exists()
    assert "counted 0 of the 4 chosen" in err and "Traceback" not in err
