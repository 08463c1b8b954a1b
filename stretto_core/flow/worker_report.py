"""What each worker of a cluster learn read: a shard's partial counts travel with its read report,
and the reports are added per worker, so a learn on a cluster says where its sessions were read,
how much each worker read and what it could not (issue 30: distributed learning that pays)."""

from __future__ import annotations

import os
import socket
from dataclasses import asdict, dataclass, field
from typing import Sequence


def this_worker() -> str:
    """The name a worker's reports carry: its host and process (the same on Dask and Ray)."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class ShardCount:
    """One shard counted on a worker: its partial flow (JSON, the compact form that travels) and
    what the worker read to count it."""

    flow_json: str
    worker: str
    files: int
    sessions: int
    bytes_read: int
    cpu_s: float
    problems: list[str]


@dataclass
class WorkerReport:
    """Every shard one worker counted, added up."""

    worker: str
    shards: int = 0
    files: int = 0
    sessions: int = 0
    bytes_read: int = 0
    cpu_s: float = 0.0
    problems: list[str] = field(default_factory=list)

    def add(self, shard: ShardCount) -> None:
        self.shards += 1
        self.files += shard.files
        self.sessions += shard.sessions
        self.bytes_read += shard.bytes_read
        self.cpu_s += shard.cpu_s
        self.problems.extend(shard.problems)

    def line(self) -> str:
        """One line for a person: where, how much, and how many problems."""
        unread = f", {len(self.problems)} problems" if self.problems else ""
        return (f"worker {self.worker}: {self.sessions} sessions from {self.files} files, "
                f"{self.bytes_read / 1e6:.1f} MB read, {self.shards} shards, {self.cpu_s:.1f} s CPU{unread}")

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def by_worker(counts: Sequence[ShardCount]) -> list[WorkerReport]:
    """The shards' reports added per worker, in the order of the workers' names."""
    reports: dict[str, WorkerReport] = {}
    for shard in counts:
        reports.setdefault(shard.worker, WorkerReport(shard.worker)).add(shard)
    return [reports[name] for name in sorted(reports)]
