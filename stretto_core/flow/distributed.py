"""Learning on an existing distributed engine: map (shards of files → partial counts), reduce (add).

Counts are a commutative monoid, so a learn splits into shards of consecutive files, each
counted on a worker (`stream.count_files`, one session at a time), and their partial flows are
added (`flow.ir.merge`'s sum) into the same bytes as counting them in one process. Nothing here
schedules: Dask does (a local cluster of `workers` processes by default, or the scheduler at
`address`), or Ray where the user has it (`engine="ray"`; a running cluster when `address` is
given). Both are optional: `pip install 'stretto[dask]'`.

Workers read the files themselves, so a shared store (a network file system, an object store
by URL, `sessions/shared.py`) serves a cluster of several machines; only the file names travel
to them and only the partial counts come back, with each worker's read report (the sessions it
counted, what it could not read). A count of fewer sessions than were chosen fails the learn
(`ShardsUnread`): a flow learned from what the workers happened to reach is no flow of the data.
"""

from __future__ import annotations

from typing import Sequence

from stretto_core.errors import StrettoError
from stretto_core.flow.ir import Flow
from stretto_core.flow.stream import add_all, count_files, shards
from stretto_core.learn.bindings.model import DEFAULT_OPTIONS, BindingOptions
from stretto_core.learn.result_fields import FeatureMap
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.store import LoadReport

SHARDS_PER_WORKER = 4
"""Each worker gets about this many shards, so a slow shard does not hold the others up."""

ENGINES = ("dask", "ray")


def _count_shard(files: list[str], manifest_json: str, features_json: str | None, constants: bool,
                 role: str, options: BindingOptions) -> tuple[str, int, list[str]]:
    """One shard's partial counts, as the flow's JSON, with its read report: the sessions it
    counted and every problem reading its files (what a worker runs)."""
    manifest = ToolManifest.model_validate_json(manifest_json)
    features = FeatureMap.model_validate_json(features_json) if features_json else None
    report = LoadReport()
    flow = count_files(files, manifest, features=features, constants=constants, role=role,
                       binding_options=options, report=report, progress=False)
    counted = flow.provenance.sources[0].sessions if flow.provenance.sources else 0
    return flow.model_dump_json(exclude_none=True), counted, report.problems()


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
        self._client = None
        self._cluster = None
        self.address = address
        self.problems: list[str] = []
        """What the workers could not read (each `file[:line]: reason`), over every count."""

    def __call__(self, files: Sequence[str], role: str) -> Flow:
        parts = shards(list(files), self.workers * SHARDS_PER_WORKER)
        answers = self._dask(parts, role) if self.engine == "dask" else self._ray(parts, role)
        counted = sum(n for _, n, _ in answers)
        problems = [p for _, _, found in answers for p in found]
        self.problems.extend(problems)
        if counted < len(files):
            shown = "; ".join(problems[:3]) or "the workers reported no problem reading them"
            raise ShardsUnread(f"the {self.engine} workers counted {counted} of the {len(files)} chosen "
                               f"{role} sessions, so nothing was written ({shown}); the workers must be able "
                               "to read the files: a shared folder or an object store they can reach")
        return add_all([Flow.model_validate_json(t) for t, _, _ in answers])

    def _dask(self, parts: list[list[str]], role: str) -> list[tuple[str, int, list[str]]]:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise StrettoError("--workers needs Dask: pip install 'stretto[dask]'") from exc
        if self._client is None:
            if self.address:
                self._client = Client(self.address)
            else:
                self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                             dashboard_address=":0")
                self._client = Client(self._cluster)
        manifest_json, features_json, constants = self.args
        futures = [self._client.submit(_count_shard, part, manifest_json, features_json, constants, role,
                                       self.options, pure=False) for part in parts]
        return self._client.gather(futures)  # in shard order

    def _ray(self, parts: list[list[str]], role: str) -> list[tuple[str, int, list[str]]]:
        try:
            import ray
        except ImportError as exc:
            raise StrettoError("--engine ray needs Ray: pip install ray") from exc
        if not ray.is_initialized():
            ray.init(address=self.address, num_cpus=None if self.address else self.workers,
                     include_dashboard=False, log_to_driver=False)
        task = ray.remote(_count_shard)
        manifest_json, features_json, constants = self.args
        return ray.get([task.remote(part, manifest_json, features_json, constants, role, self.options)
                        for part in parts])

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None
