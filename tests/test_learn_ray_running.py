"""A learn on a running Ray cluster connects to its address, keeps counting shards here while the
cluster's workers start and work (one queue, each shard once), writes the bytes one process
writes, returns every worker's read report and disconnects (issue 30, goal 6). Ray is not in the
test venv: a fake stands in for it, one whose workers come back only after this process counted."""

from __future__ import annotations

import dataclasses
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from toy_sessions import refund_session as _session

from stretto_core.flow import distributed
from stretto_core.flow.stream import choose, learn_chosen
from stretto_core.flow.worker_report import ShardCount
from stretto_core.sessions.store import write_session

HERE_THREAD = "stretto-count-meanwhile"


class FakeRef:
    def __init__(self, run: Callable[[], ShardCount]) -> None:
        self.run = run


class FakeRay:
    """Ray's calls that `distributed.py` makes; its workers' shards are counted when fetched, and
    nothing comes back until this process has counted `slow_start` shards itself (which it starts
    once the cluster was handed one)."""

    def __init__(self, slow_start: int) -> None:
        self.address: str | None = None
        self.initialized = False
        self.shut_down = False
        self.here = 0
        self.here_enough = threading.Event()
        self.handed = threading.Event()
        self.slow_start = slow_start

    def is_initialized(self) -> bool:
        return self.initialized

    def init(self, address: str | None = None, **_: Any) -> None:
        self.address, self.initialized = address, True

    def remote(self, count: Callable[..., ShardCount]) -> Any:
        def submit(*args: Any) -> FakeRef:
            self.handed.set()
            return FakeRef(lambda: dataclasses.replace(count(*args), worker="ray-worker:7"))
        return type("Task", (), {"remote": staticmethod(submit)})

    def wait(self, refs: list[FakeRef], num_returns: int = 1) -> tuple[list[FakeRef], list[FakeRef]]:
        assert self.here_enough.wait(30), "this process never counted while the cluster's workers started"
        return refs[:num_returns], refs[num_returns:]

    def get(self, refs: Any) -> Any:
        if isinstance(refs, list):
            self.here_enough.wait(30)
            return [r.run() for r in refs]
        return refs.run()

    def shutdown(self) -> None:
        self.shut_down, self.initialized = True, False

    def counted_here(self) -> None:
        self.here += 1
        if self.here >= self.slow_start:
            self.here_enough.set()


def _fake_ray(monkeypatch: pytest.MonkeyPatch, slow_start: int) -> FakeRay:
    fake = FakeRay(slow_start)
    monkeypatch.setitem(sys.modules, "ray", fake)
    count = distributed._count_shard

    def counting(*args: Any) -> ShardCount:
        if threading.current_thread().name != HERE_THREAD:
            return count(*args)
        fake.handed.wait(30)  # toy shards count fast: leave the cluster some
        out = count(*args)
        fake.counted_here()
        return out

    monkeypatch.setattr(distributed, "_count_shard", counting)
    return fake


def test_a_running_cluster_and_this_process_count_every_shard_once_into_the_plain_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(12):
        write_session(_session(i), tmp_path)
    chosen = choose([str(tmp_path)], "all")
    assert chosen.manifest is not None
    plain = learn_chosen(chosen).model_dump_json()
    fake = _fake_ray(monkeypatch, slow_start=3)
    counter = distributed.cluster_counter(chosen.manifest, workers=2, engine="ray", address="10.0.0.9:6379")
    try:
        spread = learn_chosen(chosen, counter=counter).model_dump_json()
    finally:
        counter.close()
    assert fake.address == "10.0.0.9:6379" and fake.shut_down  # connected to it, then disconnected
    assert spread == plain
    reports = {r.worker: r for r in counter.reports}
    assert "ray-worker:7" in reports and len(reports) == 2  # the cluster's worker and this process
    here = next(r for name, r in reports.items() if name != "ray-worker:7")
    assert here.shards >= 3  # kept counting while the cluster's workers started
    assert sum(r.sessions for r in reports.values()) == 12 and sum(r.shards for r in reports.values()) == 12


def test_a_shard_the_cluster_cannot_count_fails_the_learn_after_this_process_stops(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):
        write_session(_session(i), tmp_path)
    chosen = choose([str(tmp_path)], "all")
    assert chosen.manifest is not None
    fake = _fake_ray(monkeypatch, slow_start=1)

    def broken(self: FakeRay, refs: Any) -> Any:
        raise RuntimeError("worker died")

    monkeypatch.setattr(FakeRay, "get", broken)
    counter = distributed.cluster_counter(chosen.manifest, workers=2, engine="ray", address="10.0.0.9:6379")
    with pytest.raises(RuntimeError, match="worker died"):
        counter(chosen.files, "data")
    counter.close()
    assert fake.shut_down
    assert not [t for t in threading.enumerate() if t.name == HERE_THREAD]  # nothing left counting


def test_without_an_address_a_local_ray_of_its_own_is_started_even_where_one_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(4):
        write_session(_session(i), tmp_path)
    chosen = choose([str(tmp_path)], "all")
    assert chosen.manifest is not None
    fake = _fake_ray(monkeypatch, slow_start=1)
    counter = distributed.cluster_counter(chosen.manifest, workers=2, engine="ray")
    try:
        counter(chosen.files, "data")
    finally:
        counter.close()
    assert fake.address == "local"  # not None: Ray would join a cluster found running on this machine
