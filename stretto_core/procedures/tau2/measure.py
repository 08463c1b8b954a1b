"""The measurement of a procedure on τ²-bench telecom solo tasks: what §4.5 of the paper reports.

For each task: the procedure alone (verdict, reward), the same on renamed customers, and the
cascade (a scripted model on the hand-backs). The summary counts tasks passed, verdicts, how
many hand-backs were in fact failures (the procedure alone scored 0 there), how many failures
it missed (it said resolved or transferred and scored 0), and LLM turns per ticket.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from stretto_core.procedures.ir import Procedure
from stretto_core.procedures.tau2.demonstrator import WorkflowModel
from stretto_core.procedures.tau2.harness import TaskRun, cascade_task, run_task
from stretto_core.procedures.tau2.env import telecom_tasks


@dataclass
class Summary:
    """What a set of runs shows (all counts of tasks)."""

    tasks: int = 0
    passed: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    hand_backs_failed: int = 0
    hand_backs_passed: int = 0
    missed_failures: int = 0
    calls_per_ticket: float = 0.0
    cascade_passed: int | None = None
    llm_turns: int | None = None
    llm_turns_per_ticket: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(alone: list[TaskRun], cascaded: list[TaskRun] | None = None) -> Summary:
    """The summary of the procedure's runs alone, and of its cascade when given."""
    s = Summary(tasks=len(alone))
    s.passed = sum(r.reward.reward >= 1 for r in alone)
    s.verdicts = dict(sorted(Counter(r.verdict or "none" for r in alone).items()))
    s.hand_backs_failed = sum(r.verdict == "hand_back" and r.reward.reward < 1 for r in alone)
    s.hand_backs_passed = sum(r.verdict == "hand_back" and r.reward.reward >= 1 for r in alone)
    s.missed_failures = sum(r.verdict != "hand_back" and r.reward.reward < 1 for r in alone)
    s.calls_per_ticket = round(sum(len(r.calls) for r in alone) / max(1, len(alone)), 2)
    if cascaded is not None:
        s.cascade_passed = sum(r.reward.reward >= 1 for r in cascaded)
        s.llm_turns = sum(r.llm_turns for r in cascaded)
        s.llm_turns_per_ticket = round(s.llm_turns / max(1, len(cascaded)), 3)
    return s


def measure(procedure: Procedure, task_ids: list[str], renamed: bool = False,
            cascade: bool = True) -> tuple[list[TaskRun], list[TaskRun] | None]:
    """The procedure alone on each task, and (on its hand-backs) the cascade with the workflow
    model; a task the procedure did not hand back keeps its run and 0 LLM turns."""
    tasks = telecom_tasks()
    db = None
    mapping: dict[str, str] = {}
    if renamed:
        from stretto_core.procedures.tau2.rename import renamed_db, renamed_task, renaming

        mapping = renaming()
        db = renamed_db(mapping)
    alone, cascaded = [], []
    for task_id in task_ids:
        task = tasks[task_id]
        if renamed:
            task = renamed_task(task, mapping)
        run = run_task(procedure, task, db)
        alone.append(run)
        if cascade:
            cascaded.append(cascade_task(procedure, task, WorkflowModel, db) if run.verdict == "hand_back" else run)
    return alone, (cascaded if cascade else None)


def run_rows(runs: list[TaskRun]) -> list[dict[str, Any]]:
    """Per-task rows for a results file."""
    return [{"task_id": r.task_id, "verdict": r.verdict, "reward": r.reward.reward, "calls": len(r.calls),
             "llm_turns": r.llm_turns, "reason": r.reason, "failed": r.reward.failed_assertions} for r in runs]
