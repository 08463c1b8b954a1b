"""Counting shards in this process while a cluster starts and works, so its start is not time lost.

A local Ray takes seconds to start (3-6 s on 2 cores: its control processes, then workers that
import Ray), longer than a few shards take to count; even a running one takes 0.6-0.8 s to connect
to and about 1 s more before its workers (started for each learn) take a first shard. A thread
here counts shards from the front, one at a time, while the main thread starts or connects to
the cluster and then hands it shards from the same queue (`take`) as its workers free up
(`distributed.py`), so each shard is counted exactly once, here or there. Counts are a sum, so
which process counted a shard changes no byte of the flow; each shard's report names the process
that read it.
"""

from __future__ import annotations

import threading
from typing import Callable, Sequence

from stretto_core.flow.worker_report import ShardCount

CountShard = Callable[[list[str]], ShardCount]


class CountMeanwhile:
    """`start()` counts `parts` from the front on a thread; `stop()` says where it stopped."""

    def __init__(self, parts: Sequence[list[str]], count: CountShard) -> None:
        self.parts = list(parts)
        self.count = count
        self.done: dict[int, ShardCount] = {}
        self.error: BaseException | None = None
        self._next = 0
        self._stopped = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="stretto-count-meanwhile", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def take(self) -> int | None:
        """The index of the next shard nobody has taken (this one is the caller's), None when none is left."""
        with self._lock:
            if self._stopped or self._next >= len(self.parts):
                return None
            self._next += 1
            return self._next - 1

    def _run(self) -> None:
        try:
            while (i := self.take()) is not None:
                self.done[i] = self.count(self.parts[i])
        except BaseException as exc:  # handed to the caller in finish()
            self.error = exc

    def stop(self) -> int:
        """No shard is taken after this; the index of the first shard left for the cluster."""
        with self._lock:
            self._stopped = True
            return self._next

    def finish_by_index(self) -> dict[int, ShardCount]:
        """The shards counted here by index, once the one in hand is done (its error raised)."""
        self._thread.join()
        if self.error is not None:
            raise self.error
        return dict(self.done)

    def finish(self) -> list[ShardCount]:
        """The shards counted here, in order, once the one in hand is done (its error raised)."""
        done = self.finish_by_index()
        return [done[i] for i in sorted(done)]
