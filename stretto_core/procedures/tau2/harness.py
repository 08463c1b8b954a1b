"""Runs on τ²-bench telecom solo tasks: demonstrations recorded as sessions, procedures and
cascades scored by τ²-bench's own reward.

Every run starts from a fresh environment in the task's initial state (or a renamed copy of it);
its calls, in order, are what the reward replays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from stretto_core.procedures.cascade import CascadeResult, Model, run_cascade
from stretto_core.procedures.episodes import SOURCE_LABEL, TICKET_LABEL
from stretto_core.procedures.ir import Procedure
from stretto_core.procedures.runtime import RunResult, run_procedure
from stretto_core.procedures.tau2.demonstrator import Workflow, telecom_workflow
from stretto_core.procedures.tau2.env import SoloToolSet, env_constructor, telecom_tasks
from stretto_core.procedures.tau2.reward import Reward, task_reward
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, parse_json_content

CallRecord = tuple[str, dict[str, Any], str, bool]

DEMONSTRATOR = "telecom-workflow-demonstrator"
MAX_DEMO_CALLS = 80


@dataclass
class TaskRun:
    """One task's run: the calls made, the reward, and (for procedures) the verdict."""

    task_id: str
    calls: list[CallRecord]
    reward: Reward
    verdict: str | None = None
    reason: str = ""
    llm_turns: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def drive(workflow: Workflow, tools: SoloToolSet, limit: int = MAX_DEMO_CALLS) -> list[CallRecord]:
    """Run a workflow generator against a tool set; every call and its result, in order."""
    calls: list[CallRecord] = []
    try:
        call = next(workflow)
        while len(calls) < limit:
            tool, arguments = call
            content, error = tools.call(tool, arguments)
            calls.append((tool, arguments, content, error))
            call = workflow.send((content, error))
    except StopIteration:
        pass
    return calls


def demonstrate(task: Any, manifest: ToolManifest | None = None, db: Any | None = None,
                split: str = "train") -> tuple[Session, Reward]:
    """The demonstrator's run on one task, as a session (one LLM turn per call), and its reward."""
    tools = SoloToolSet(task, db)
    calls = drive(telecom_workflow(task.ticket or ""), tools)
    reward = task_reward(task, calls, env_constructor(db))
    return session_of(task, calls, reward.reward, manifest, split), reward


def session_of(task: Any, calls: list[CallRecord], reward: float, manifest: ToolManifest | None,
               split: str) -> Session:
    """A solo run as a stretto session: the ticket in `labels`, one LLM turn per call, a stop turn."""
    events: list[Any] = []
    for i, (tool, arguments, content, error) in enumerate(calls):
        call_id = f"d{i}"
        events.append(LLMTurn(calls=[ToolCall(call_id=call_id, tool=tool, arguments=arguments)]))
        events.append(ToolResult(call_id=call_id, tool=tool, content=content, error=error,
                                 parsed=None if error else parse_json_content(content)))
    events.append(LLMTurn(text="###STOP###"))
    header = SessionHeader(session_id=f"demo-telecom-{_slug(task.id)}", harness="stretto-demonstrator",
                           agent_model=DEMONSTRATOR, app="tau2/telecom", task_id=task.id, trial=0,
                           reward=reward, solo=True, manifest=manifest,
                           labels={TICKET_LABEL: task.ticket or "", SOURCE_LABEL: "demonstration",
                                   "split": split})
    return Session(header=header, events=events)


def _slug(task_id: str) -> str:
    import hashlib

    return hashlib.sha256(task_id.encode()).hexdigest()[:12]


def run_task(procedure: Procedure, task: Any, db: Any | None = None) -> TaskRun:
    """The procedure alone on one task, scored."""
    tools = SoloToolSet(task, db)
    result: RunResult = run_procedure(procedure, task.ticket or "", tools)
    calls = [(c.tool, c.arguments, c.content, c.error) for c in result.calls]
    return TaskRun(task.id, calls, task_reward(task, calls, env_constructor(db)), result.verdict, result.reason)


def cascade_task(procedure: Procedure, task: Any, model_for: Callable[[str], Model],
                 db: Any | None = None) -> TaskRun:
    """The procedure, then the model on a hand-back, on one task, scored on all the calls made."""
    tools = SoloToolSet(task, db)
    result: CascadeResult = run_cascade(procedure, task.ticket or "", tools, model_for(task.ticket or ""))
    calls = [(c.tool, c.arguments, c.content, c.error) for c in result.calls]
    run = TaskRun(task.id, calls, task_reward(task, calls, env_constructor(db)), result.run.verdict,
                  result.run.reason, result.llm_turns)
    run.extra["model_calls"] = len(result.model_calls)
    return run


def package_task(task_id: str) -> Any:
    return telecom_tasks()[task_id]


def training_task_ids() -> list[str]:
    """The official split's training tasks (74)."""
    from stretto_core.sessions.splits import official_split

    return list(official_split("tau2", "telecom").train)


def generated_task_ids(limit: int | None = None, seed: int = 0) -> list[str]:
    """Generated telecom tasks (the package's `full` set) that are neither training nor test
    tasks, nor a test task under another persona, in a seeded random order."""
    import random

    from stretto_core.procedures.sources import fault_signature
    from stretto_core.sessions.splits import official_split

    split = official_split("tau2", "telecom")
    test, train = set(split.test), set(split.train)
    signatures = {fault_signature(t) for t in test}
    ids = sorted(t for t in telecom_tasks() if t not in test and t not in train
                 and fault_signature(t) not in signatures)
    random.Random(seed).shuffle(ids)
    return ids if limit is None else ids[:limit]


def demonstrations(task_ids: list[str], manifest: ToolManifest | None = None,
                   split: str = "train") -> tuple[list[Session], list[float]]:
    """The demonstrator's sessions on these tasks (all of them, successful or not) and rewards.

    The sessions carry the shipped telecom manifest unless another is given: without tool kinds a
    compiled procedure could not tell reads from writes, and its guard would hold nothing back.
    """
    if manifest is None:
        from stretto_core.paths import manifest_path
        from stretto_core.sessions.manifest import load_manifest

        manifest = load_manifest(manifest_path("tau2", "telecom"))
    tasks = telecom_tasks()
    sessions, rewards = [], []
    for task_id in task_ids:
        session, reward = demonstrate(tasks[task_id], manifest, split=split)
        sessions.append(session)
        rewards.append(reward.reward)
    return sessions, rewards
