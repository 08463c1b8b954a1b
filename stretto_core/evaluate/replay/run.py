"""Replay recorded episodes with a flow serving lookups, and count what it would have saved.

This is the library entry point that measurement code calls many times (calibration, sweeps,
learning curves, bootstrap): `replay_sessions` replays episodes at one threshold and returns the
rows of `replay_rows`; `replay_thetas` replays them at several thresholds, reusing an episode's
replay at a threshold wherever its decisions would all come out the same. Episodes are indexed
once (`replay_episode.prepare_sessions`); pass prepared episodes to skip even that.

Two replays (paper §3): from the record (`replay_record`, the default), or in the benchmark's
environment (`replay_env`, `env=True`). Many episodes are replayed on several processes, and rows
come back in the order the episodes were given, whatever the number of processes.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence, Union

from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.evaluate.envs import EnvironmentUnavailable, has_environment
from stretto_core.errors import StrettoError
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.evaluate.replay.env import EnvSource, OpenEnvironment
from stretto_core.evaluate.replay.episode import VIEWS, PreparedEpisode, prepare_sessions
from stretto_core.evaluate.replay.record import RecordSource
from stretto_core.evaluate.replay.rows import ReplayConfig, ReplayResult
from stretto_core.evaluate.replay.tally import EpisodeReplay, tally
from stretto_core.evaluate.replay.walk import TraceStep, Walk
from stretto_core.sessions.model import Session
from stretto_core.serve.speculator import DEFAULT_THETA, MAX_LOOKUPS_PER_CALL, MAX_LOOKUPS_PER_SESSION, POLICIES, FlowModel
from stretto_core.progress import track

log = logging.getLogger("stretto.replay")

MAX_PROCESSES = 2
"""Replays use at most this many processes (the machines this runs on have two cores)."""

PARALLEL_MIN_EPISODES = 40
"""Fewer episodes than this are replayed in this process: starting workers would cost more."""

EngineSource = Union[FlowModel, Engine, Callable[[EngineConfig], Engine]]
"""What serves the lookups: a flow model, an engine (its guards kept), or a factory of engines."""


@dataclass(frozen=True)
class ReplayOptions:
    """How to replay: threshold, policy, record or environment, and what to log."""

    theta: float = DEFAULT_THETA
    policy: str = "use"
    env: bool = False
    weigh: bool = False
    """Log every candidate weighed at every decision (`ReplayResult.weighed_rows`)."""
    manifest: ToolManifest | None = None
    """Which tools are reads, for every session; by default each session's own."""
    per_call: int = MAX_LOOKUPS_PER_CALL
    per_session: int = MAX_LOOKUPS_PER_SESSION
    processes: int | None = None
    """Processes to replay on; None: up to MAX_PROCESSES when there are many episodes."""
    flow: str | None = None
    """The flow's name or path, written into the result's config."""
    split: str | None = None
    open_env: OpenEnvironment | None = None
    """How to build an episode's environment (default `envs.open_environment`)."""
    strict_stand_ins: bool = False
    """Record replay: a lookup bound from another call's stand-in never answers (`replay_record`)."""
    view: str = "agent"
    """Whose view of each session is replayed: `agent` (everything) or `proxy` (what an MCP proxy
    between the agent and its tools sees: no user words, no replies; `sessions.views`). A proxy
    view's LLM turns are still the episode's own, so its savings compare with the agent's.
    Episodes given already prepared keep the view they were prepared in."""

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise StrettoError(f"replay policy must be one of {', '.join(POLICIES)}, not {self.policy!r}")
        if not 0.0 <= self.theta <= 1.0:
            raise StrettoError(f"replay threshold θ (--theta) must be between 0 and 1, not {self.theta}")
        if self.view not in VIEWS:
            raise StrettoError(f"replay view must be one of {', '.join(VIEWS)}, not {self.view!r}")

    def config(self) -> ReplayConfig:
        return ReplayConfig(flow=self.flow, policy=self.policy, theta=self.theta, env=self.env,
                            split=self.split, weigh=self.weigh, strict_stand_ins=self.strict_stand_ins,
                            view=self.view)


def build_engine(source: EngineSource, options: ReplayOptions) -> Engine:
    """The engine that serves one replay, at the options' threshold, policy and budgets."""
    settings = dict(theta=options.theta, policy=options.policy, per_call=options.per_call,
                    per_session=options.per_session, shadow=False,
                    served=False)  # the walk asks where any earlier value came from: the full state
    if isinstance(source, Engine):
        return Engine(source.model, replace(source.config, **settings))
    if hasattr(source, "read_tools") and hasattr(source, "manifest"):
        return Engine(source, EngineConfig(**settings))  # type: ignore[arg-type]
    if callable(source):
        engine = source(EngineConfig(**settings))
        if not isinstance(engine, Engine):
            raise StrettoError(f"the engine factory returned {type(engine).__name__}, not an Engine")
        return engine
    raise StrettoError(f"cannot replay with {type(source).__name__}: pass a flow model, an Engine, "
                       "or a function from EngineConfig to Engine")


def replay_episode(engine: Engine, episode: PreparedEpisode, options: ReplayOptions) -> EpisodeReplay:
    """Replay one episode with an engine, from the record or in its environment."""
    if not options.env:
        source = RecordSource(strict=options.strict_stand_ins)
        return tally(Walk(episode, engine, source, weigh=options.weigh).run())
    source = EnvSource.open(episode, options.open_env) if options.open_env else EnvSource.open(episode)
    walk = Walk(episode, engine, source, weigh=options.weigh).run()
    if source.unresolved:
        log.warning("session %s: %d call(s) could not be run ahead and were taken as not answered",
                    episode.session_id, source.unresolved)
    return tally(walk, env_mismatches=source.mismatches)


def replay_sessions(source: EngineSource, sessions: Sequence[Session | PreparedEpisode],
                    options: ReplayOptions | None = None) -> ReplayResult:
    """Replay every episode; totals over them at the top level of the result, then the rows."""
    options = options or ReplayOptions()
    episodes = prepare_sessions(_labelled_for_env(sessions, options), options.manifest, options.view)
    _check_environments(episodes, options)
    replays = _map_ordered(_ReplayAt(source, options), episodes, options.processes)
    return assemble(options, replays)


def replay_thetas(source: EngineSource, sessions: Sequence[Session | PreparedEpisode],
                  thetas: Sequence[float], options: ReplayOptions | None = None) -> dict[float, ReplayResult]:
    """Replay every episode at each threshold; the same as `replay_sessions` at each, cheaper.

    Thresholds are taken in increasing order. An episode's replay at one threshold is reused at
    the next when every decision in it comes out the same there: each lookup made still clears
    the site's threshold, and each hand-back was at a threshold no higher (a budget's hand-back
    holds at any). A reused episode's rows are the same objects in both results: read, don't edit.
    """
    options = options or ReplayOptions()
    order = sorted(set(float(t) for t in thetas))
    for theta in order:
        replace(options, theta=theta)  # validates each threshold before any work
    episodes = prepare_sessions(_labelled_for_env(sessions, options), options.manifest, options.view)
    _check_environments(episodes, options)
    per_episode = _map_ordered(_SweepAt(source, options, tuple(order)), episodes, options.processes)
    return {theta: assemble(replace(options, theta=theta), [runs[i] for runs in per_episode])
            for i, theta in enumerate(order)}


def _labelled_for_env(sessions: Sequence[Session | PreparedEpisode],
                      options: ReplayOptions) -> list[Session | PreparedEpisode]:
    """In environment replay, AgentDojo runs are labelled with the data revision they ran on."""
    if not options.env:
        return list(sessions)
    from stretto_core.evaluate.envs.recordings import label_agentdojo_data

    plain = [s for s in sessions if isinstance(s, Session)]
    labelled = iter(label_agentdojo_data(plain))
    return [next(labelled) if isinstance(s, Session) else s for s in sessions]


def assemble(options: ReplayOptions, replays: Sequence[EpisodeReplay]) -> ReplayResult:
    """A replay result from episodes' replays, in their order, with its totals filled in."""
    result = ReplayResult(config=options.config())
    for replay in replays:
        result.episode_rows.append(replay.row)
        result.lookup_rows.extend(replay.lookups)
        result.weighed_rows.extend(replay.weighed)
    return result.totals_from_rows()


def _check_environments(episodes: Sequence[PreparedEpisode], options: ReplayOptions) -> None:
    """Before any work: every episode of an environment replay has an environment stretto runs."""
    if not options.env or options.open_env is not None:
        return
    missing = sorted({e.header.app or "(no app)" for e in episodes if not has_environment(e.header.app)})
    if missing:
        first = next(e for e in episodes if (e.header.app or "(no app)") == missing[0])
        raise EnvironmentUnavailable(
            f"no environment for app(s) {', '.join(missing)} (e.g. session {first.session_id}); "
            "environments exist for tau2/<domain> and agentdojo/<suite>: replay the rest from the record")


def trace_holds(trace: Sequence[TraceStep], model: FlowModel, theta: float) -> bool:
    """Whether every decision of a replay's trace comes out the same at threshold `theta`."""
    for step in trace:
        if step.budget:
            continue
        now = model.threshold(step.site, theta)
        if step.score is None:
            if now < step.threshold:
                return False  # a lower bar might admit a candidate the trace never scored
        elif step.score < now:
            return False
    return True


@dataclass(frozen=True)
class _ReplayAt:
    """Replay one episode at one threshold (what a forked worker runs for each episode)."""

    source: Any
    options: ReplayOptions

    def __call__(self, episode: PreparedEpisode) -> EpisodeReplay:
        return replay_episode(build_engine(self.source, self.options), episode, self.options)


@dataclass(frozen=True)
class _SweepAt:
    """Replay one episode at each threshold, in increasing order, reusing replays that hold."""

    source: Any
    options: ReplayOptions
    thetas: tuple[float, ...]

    def __call__(self, episode: PreparedEpisode) -> list[EpisodeReplay]:
        out: list[EpisodeReplay] = []
        last: EpisodeReplay | None = None
        for theta in self.thetas:
            options = replace(self.options, theta=theta)
            engine = build_engine(self.source, options)
            if last is None or not trace_holds(last.trace, engine.model, theta):
                last = replay_episode(engine, episode, options)
            out.append(last)
        return out


_JOB: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
"""The work a forked pool's workers share: set just before the fork, so nothing is pickled in."""


@dataclass(frozen=True)
class _Failed:
    """A user-facing error in a worker, carried back as text (not every error pickles)."""

    message: str


def _run_job(index: int) -> Any:
    assert _JOB is not None
    fn, items = _JOB
    try:
        return fn(items[index])
    except StrettoError as exc:
        return _Failed(str(exc))


def processes_for(episodes: int, processes: int | None) -> int:
    """How many processes to replay `episodes` episodes on."""
    if processes is not None:
        return max(1, processes)
    if episodes < PARALLEL_MIN_EPISODES:
        return 1
    return max(1, min(MAX_PROCESSES, os.cpu_count() or 1))


def _map_ordered(fn: Callable[[Any], Any], items: Sequence[Any], processes: int | None) -> list[Any]:
    """`[fn(x) for x in items]`, on forked worker processes when there are many items."""
    global _JOB
    n = processes_for(len(items), processes)
    nested = multiprocessing.current_process().daemon  # a pool's worker may not start a pool
    if n <= 1 or len(items) < 2 or nested or "fork" not in multiprocessing.get_all_start_methods():
        return [fn(x) for x in track(items, "replay", total=len(items), unit="episode")]
    _JOB = (fn, items)
    try:
        with multiprocessing.get_context("fork").Pool(n) as pool:
            out = pool.map(_run_job, range(len(items)), chunksize=max(1, len(items) // (n * 8)))
    finally:
        _JOB = None
    failed = next((r for r in out if isinstance(r, _Failed)), None)
    if failed is not None:
        raise StrettoError(failed.message)
    return out
