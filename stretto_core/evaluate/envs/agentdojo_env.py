"""AgentDojo's own environments (package `agentdojo`), one copy per episode.

The recorded runs are benign (no injections), so every episode of a suite starts from the suite's
default environment, with the data of the package release that recorded it (`agentdojo_data`).
Parsing it re-reads YAML (up to 300 ms for workspace), so it is built once per suite, data
revision and process, and deep-copied per episode (1-2 ms). Calls are executed as AgentDojo's
`ToolsExecutor` does (string-list arguments `literal_eval`ed, its texts for an empty or unknown
tool name) and rendered as the model saw them: the error text when there is one, else the
formatted result (`<<...>>`-delimited under the spotlighting defence).

Two things cannot match a recording, whatever the replay does: `datetime.now()` stamps (sent
emails, edited files) come from the wall clock, and a few tools build lists via `set`
(`create_calendar_event`'s participants), whose order follows the process's `PYTHONHASHSEED`.
Fix the seed for repeatable replays; compare such results with `fidelity.same_result`.
"""

from __future__ import annotations

import importlib
from ast import literal_eval
from functools import cache
from typing import Any

from stretto_core.evaluate.envs.base import EnvironmentUnavailable, missing_package
from stretto_core.evaluate.envs.agentdojo_data import data_revision, injection_defaults, restore_entries

DEFAULT_VERSION = "v1.2.2"
"""The suite version used when a session names none. In agentdojo 0.1.35 versions change prompts,
checkers and injection tasks only: every version has the same tools and the same data."""

SPOTLIGHTING = "spotlighting_with_delimiting"


class AgentDojoEnvironment:
    """One episode's AgentDojo environment; `call` runs a tool as AgentDojo's executor would."""

    def __init__(self, suite_name: str, env: Any, runtime: Any, spotlight: bool = False) -> None:
        self.suite_name = suite_name
        self.env = env
        self.runtime = runtime
        self.spotlight = spotlight
        self._executor = importlib.import_module("agentdojo.agent_pipeline.tool_execution")

    def call(self, tool: str, arguments: dict[str, Any], requestor: str = "agent") -> tuple[str, bool]:
        """Run one call; return `(text the model saw, error)`. AgentDojo has no user tools."""
        if requestor not in ("agent", "assistant"):
            raise ValueError(f"AgentDojo has no {requestor!r} tools: every call is the agent's")
        content, error = self.execute(tool, arguments)
        if error is not None:
            return error, True
        return content, False

    def execute(self, tool: str, arguments: dict[str, Any]) -> tuple[str, str | None]:
        """The executor's formatted content and its error text (None when the call succeeded)."""
        executor = self._executor
        if tool == executor.EMPTY_FUNCTION_NAME:
            return "", "Empty function name provided. Provide a valid function name."
        if tool not in self.runtime.functions:
            return "", f"Invalid tool {tool} provided."
        args = {
            key: literal_eval(value)
            if isinstance(value, str) and executor.is_string_list(value) else value
            for key, value in arguments.items()
        }
        result, error = self.runtime.run_function(self.env, tool, args)
        content = executor.tool_result_to_str(result)
        if self.spotlight:
            content = f"<<{content}>>"
        return content, error

    def snapshot(self) -> Any:
        """A deep copy of the environment's state (0.1-2.5 ms), for checking that a call changed
        nothing: `get_unread_emails`, for one, marks what it returns as read."""
        return self.env.model_copy(deep=True)


def open_agentdojo(suite_name: str, task_id: str | None = None, version: str | None = None,
                   spotlight: bool = False, data: str | None = None) -> AgentDojoEnvironment:
    """A fresh copy of `suite_name`'s default environment, set up for user task `task_id`.

    `version` picks the suite's tasks; `data` the suite data as of a benchmark version (the
    newest version of the package that recorded the run; see `agentdojo_data`), by default the
    installed package's.
    """
    try:
        revision = data_revision(data)
    except ValueError as exc:
        raise EnvironmentUnavailable(str(exc)) from exc
    suite = _suite(version or DEFAULT_VERSION, suite_name)
    env = _default_environment(version or DEFAULT_VERSION, suite_name, revision).model_copy(deep=True)
    if task_id is not None and task_id in suite.user_tasks:
        env = suite.get_user_task_by_id(task_id).init_environment(env)
    runtime = importlib.import_module("agentdojo.functions_runtime").FunctionsRuntime(suite.tools)
    return AgentDojoEnvironment(suite_name, env, runtime, spotlight=spotlight)


def uses_spotlighting(*names: str | None) -> bool:
    """Whether a pipeline (named in any of `names`) ran the spotlighting defence."""
    return any(name and SPOTLIGHTING in name for name in names)


@cache
def _default_environment(version: str, suite_name: str, revision: str) -> Any:
    """The suite's default environment with its default injection texts (a benign run).

    This is `TaskSuite.load_and_inject_default_environment({})` with one step added: the parsed
    data is edited back to the entries of the data revision before it is validated.
    """
    suite = _suite(version, suite_name)
    yaml = importlib.import_module("yaml")
    read_suite_file = importlib.import_module("agentdojo.task_suite.task_suite").read_suite_file
    text = read_suite_file(suite.name, "environment.yaml", suite.data_path)
    defaults = injection_defaults(suite.name, suite.get_injection_vector_defaults(), revision)
    parsed = yaml.safe_load(text.format(**defaults))
    restore_entries(suite.name, parsed, revision)
    return suite.environment_type.model_validate(parsed)


@cache
def _suite(version: str, suite_name: str) -> Any:
    try:
        load_suites = importlib.import_module("agentdojo.task_suite.load_suites")
    except ImportError as exc:
        raise missing_package("AgentDojo", "agentdojo", exc) from exc
    suites = load_suites.get_suites(version)
    if not suites:
        raise EnvironmentUnavailable(f"agentdojo has no benchmark version {version!r}")
    if suite_name not in suites:
        raise EnvironmentUnavailable(
            f"agentdojo {version} has no suite {suite_name!r} (suites: {', '.join(sorted(suites))})"
        )
    return suites[suite_name]
