"""While a cluster starts, shards are counted here from the front; the cluster gets every shard
not yet taken, so each shard is counted exactly once and the flow is the same (issue 30, goal 6)."""

from __future__ import annotations

import threading

import pytest

from stretto_core.flow.count_meanwhile import CountMeanwhile
from stretto_core.flow.worker_report import ShardCount

PARTS = [[f"f{i}"] for i in range(8)]


def _counted(part: list[str]) -> ShardCount:
    return ShardCount(part[0], "here:1", 1, 1, 10, 0.0, [])


def test_shards_counted_meanwhile_and_those_left_make_every_shard_once() -> None:
    two_done = threading.Event()
    release = threading.Event()
    seen: list[str] = []

    def count(part: list[str]) -> ShardCount:
        seen.append(part[0])
        if len(seen) == 2:
            two_done.set()
            release.wait(5)  # the cluster comes up while the second shard is in hand
        return _counted(part)

    meanwhile = CountMeanwhile(PARTS, count)
    meanwhile.start()
    assert two_done.wait(5)
    first = meanwhile.stop()
    release.set()
    here = meanwhile.finish()
    assert first == 2 and [s.flow_json for s in here] == ["f0", "f1"]
    left = [p[0] for p in PARTS[first:]]
    assert sorted([s.flow_json for s in here] + left) == sorted(p[0] for p in PARTS)


def test_a_cluster_up_before_any_shard_was_taken_gets_them_all() -> None:
    meanwhile = CountMeanwhile(PARTS, _counted)
    assert meanwhile.stop() == 0  # stopped before it started: it takes nothing
    meanwhile.start()
    assert meanwhile.finish() == []


def test_a_shard_that_fails_here_fails_the_learn() -> None:
    def broken(part: list[str]) -> ShardCount:
        raise ValueError(f"cannot count {part[0]}")

    meanwhile = CountMeanwhile(PARTS, broken)
    meanwhile.start()
    with pytest.raises(ValueError, match="cannot count f0"):
        meanwhile.finish()
