"""Learning on an existing distributed engine: map (shards of files → partial counts), reduce (add).

Counts are a commutative monoid, so a learn splits into shards of consecutive files, each
counted on a worker (`stream.count_files`, one session at a time), and their partial flows are
added (`flow.ir.merge`'s sum) into the same bytes as counting them in one process. Nothing here
schedules: Dask does (a local cluster of `workers` processes by default, or the scheduler at
`address`), or Ray where the user has it (`engine="ray"`; a running cluster when `address` is
given). Both are optional: `pip install 'stretto[dask]'`.

Workers read the files themselves, so a shared store (a network file system, an object store
by URL, `sessions/shared.py`) serves a cluster of several machines; only the file names travel
to them and only the partial counts come back, with each worker's read report (the files,
sessions and bytes it read, its CPU time, what it could not read: `worker_report.py`). A local
Dask cluster forks its workers from this process (`start_method`), so they start with the code
already imported; on Ray, shards are counted here too, from one queue with its workers, while a
local one starts (seconds) or a running one is connected to and starts the learn's workers
(`count_meanwhile.py`, `feed`). A count of fewer sessions than were chosen fails the learn
(`ShardsUnread`): a flow learned from what the workers happened to reach is no flow of the data.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Callable, Sequence

from stretto_core.errors import StrettoError
from stretto_core.flow.count_meanwhile import CountMeanwhile
from stretto_core.flow.ir import Flow
from stretto_core.flow.stream import add_all, count_files, shards
from stretto_core.flow.worker_report import ShardCount, WorkerReport, by_worker, this_worker
from stretto_core.learn.bindings.model import DEFAULT_OPTIONS, BindingOptions
from stretto_core.learn.result_fields import FeatureMap
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.store import LoadReport

SHARDS_PER_WORKER = 4
"""Each worker gets about this many shards, so a slow shard does not hold the others up."""
MEANWHILE_SHARDS_PER_WORKER = 16
"""Shards a worker on Ray, where some are counted here while it starts and beside it: smaller, so
the last ones, here and there, end close together (a shard costs no measurable CPU of its own:
8 shards of τ² 4× counted in 5.04-5.19 s, at once 5.16-5.20)."""

RAY_IN_FLIGHT_PER_WORKER = 2
"""Shards handed to Ray a worker at a time: one counting, one waiting, so a worker that ends a shard
starts the next at once instead of after the round trip through this process (whose counting
thread holds the interpreter's lock up to 5 ms at a time whenever the main thread wants it)."""

ENGINES = ("dask", "ray")


def _count_shard(files: list[str], manifest_json: str, features_json: str | None, constants: bool,
                 role: str, options: BindingOptions) -> ShardCount:
    """One shard's partial counts, as the flow's JSON, with its read report: the worker, the files,
    sessions and bytes it read, its CPU time, and every problem reading its files (what a worker runs)."""
    cpu = time.process_time()
    manifest = ToolManifest.model_validate_json(manifest_json)
    features = FeatureMap.model_validate_json(features_json) if features_json else None
    report = LoadReport()
    flow = count_files(files, manifest, features=features, constants=constants, role=role,
                       binding_options=options, report=report, progress=False)
    counted = flow.provenance.sources[0].sessions if flow.provenance.sources else 0
    flow_json = flow.model_dump_json(exclude_none=True)
    return ShardCount(flow_json, this_worker(), len(files), counted, report.bytes_read,
                      time.process_time() - cpu, report.problems())


def start_method() -> str:
    """How a local Dask cluster starts its workers: forked from this process on Linux, so each
    begins with stretto and Dask imported (0.05 s of CPU a worker, against 0.7-1.0 s spawned, and
    a cluster of 2 up in 0.15 s instead of 0.9-1.1 s on 2 quiet cores, 2-3 s under load:
    `benchmarks/learn_distributed.py --starts 3`). Only a process running one thread is forked
    (`stretto learn`'s): a thread of someone else's holding a lock at the fork (a recorder's
    flush, a write to stderr) would leave the worker waiting on it forever, as a test process that
    had run a hundred other tests once did. Spawned otherwise, and off Linux (macOS forks unsafely)."""
    alone = threading.active_count() == 1
    return "fork" if sys.platform.startswith("linux") and alone else "spawn"


def feed(ray: Any, submit: Callable[[list[str]], Any], meanwhile: CountMeanwhile,
         in_flight: int) -> dict[int, ShardCount]:
    """Hands Ray's workers the shards nobody took yet, `in_flight` at a time, taking the next as each
    comes back, so this process and the workers draw on one queue and each shard is counted once:
    shards handed all at once would wait in Ray's queue while this process could count them (Ray
    starts a learn's workers anew, about 1 s on 2 cores, and 16 small shards a worker keep the end
    even). What came back, by shard index."""
    pending: dict[Any, int] = {}
    back: dict[int, ShardCount] = {}
    while True:
        while len(pending) < in_flight and (i := meanwhile.take()) is not None:
            pending[submit(meanwhile.parts[i])] = i
        if not pending:
            return back
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            back[pending.pop(ref)] = ray.get(ref)


class ShardsUnread(StrettoError):
    """The workers counted fewer sessions than were chosen: a cluster that cannot read the files
    (a `memory://` store is each process's own; an object store without credentials)."""


def cluster_counter(manifest: ToolManifest, *, workers: int, address: str | None = None, engine: str = "dask",
                    features: FeatureMap | None = None, constants: bool = False,
                    binding_options: BindingOptions = DEFAULT_OPTIONS) -> "ClusterCounter":
    """A `stream.Counter` that counts shards of files on a cluster (see the module docstring)."""
    if engine not in ENGINES:
        raise StrettoError(f"--engine is one of {', '.join(ENGINES)}, not {engine!r}")
    return ClusterCounter(manifest, workers, address, engine, features, constants, binding_options)


class ClusterCounter:
    """Counts files on Dask or Ray; `close()` stops a cluster it started."""

    def __init__(self, manifest: ToolManifest, workers: int, address: str | None, engine: str,
                 features: FeatureMap | None, constants: bool, options: BindingOptions) -> None:
        self.workers = max(1, workers)
        self.engine = engine
        self.args = (manifest.model_dump_json(), features.model_dump_json() if features else None, constants)
        self.options = options
        self._client: Any = None
        self._cluster: Any = None
        self.address = address
        self.problems: list[str] = []
        """What the workers could not read (each `file[:line]: reason`), over every count."""
        self.shard_counts: list[ShardCount] = []
        self.start_s = 0.0
        """Wall seconds the cluster took to start (or to connect to), 0 before."""
        self._started_ray = False

    @property
    def reports(self) -> list[WorkerReport]:
        """Each worker's read report, over every count (`worker_report.py`)."""
        return by_worker(self.shard_counts)

    def __call__(self, files: Sequence[str], role: str) -> Flow:
        per_worker = MEANWHILE_SHARDS_PER_WORKER if self.engine == "ray" else SHARDS_PER_WORKER
        parts = shards(list(files), self.workers * per_worker)
        answers = self._dask(parts, role) if self.engine == "dask" else self._ray(parts, role)
        self.shard_counts.extend(answers)
        counted = sum(a.sessions for a in answers)
        problems = [p for a in answers for p in a.problems]
        self.problems.extend(problems)
        if counted < len(files):
            shown = "; ".join(problems[:3]) or "the workers reported no problem reading them"
            raise ShardsUnread(f"the {self.engine} workers counted {counted} of the {len(files)} chosen "
                               f"{role} sessions, so nothing was written ({shown}); the workers must be able "
                               "to read the files: a shared folder or an object store they can reach")
        return add_all([Flow.model_validate_json(a.flow_json) for a in answers])

    def _dask(self, parts: list[list[str]], role: str) -> list[ShardCount]:
        client = self.dask_client()
        manifest_json, features_json, constants = self.args
        futures = [client.submit(_count_shard, part, manifest_json, features_json, constants, role,
                                 self.options, pure=False) for part in parts]
        return client.gather(futures)  # in shard order

    def dask_client(self) -> Any:
        """The Dask client, connecting to `address` or starting a local cluster the first time."""
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise StrettoError("--workers needs Dask: pip install 'stretto[dask]'") from exc
        if self._client is None:
            started = time.perf_counter()
            if self.address:
                self._client = Client(self.address)
            else:
                import dask

                with dask.config.set({"distributed.worker.multiprocessing-method": start_method()}):
                    self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                                 dashboard_address=":0")
                self._client = Client(self._cluster)
            self.start_s = time.perf_counter() - started
        return self._client

    def _ray(self, parts: list[list[str]], role: str) -> list[ShardCount]:
        try:
            import ray
        except ImportError as exc:
            raise StrettoError("--engine ray needs Ray: pip install ray") from exc
        manifest_json, features_json, constants = self.args
        task = ray.remote(_count_shard)

        def submit(part: list[str]) -> Any:
            return task.remote(part, manifest_json, features_json, constants, role, self.options)

        # Shards are counted here from the start: while Ray starts or connects, and beside its workers.
        meanwhile = CountMeanwhile(parts, lambda part: _count_shard(part, manifest_json, features_json,
                                                                    constants, role, self.options))
        meanwhile.start()
        try:
            if not ray.is_initialized():
                started = time.perf_counter()
                # "local": a Ray of its own, even where another runs (ray.init would join that one)
                ray.init(address=self.address or "local", num_cpus=None if self.address else self.workers,
                         include_dashboard=False, log_to_driver=False)
                self.start_s, self._started_ray = time.perf_counter() - started, True
            there = feed(ray, submit, meanwhile, self.workers * RAY_IN_FLIGHT_PER_WORKER)
        finally:
            meanwhile.stop()
            here = meanwhile.finish_by_index()
        counted = {**here, **there}
        return [counted[i] for i in range(len(parts))]  # in shard order

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None
        if self._started_ray:
            import ray

            ray.shutdown()
            self._started_ray = False
