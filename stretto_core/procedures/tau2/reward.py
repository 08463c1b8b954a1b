"""τ²-bench's own reward of a solo run, computed by its own evaluators on the run's messages.

`tau2.evaluator.evaluator.evaluate_simulation(simulation, task, EvaluationType.ALL, solo_mode,
domain)` is how τ²-bench scores a simulation. It imports `tau2.registry` (and with it litellm)
only to look up the domain's environment constructor, so this module calls the three
deterministic evaluators it combines, with the same arithmetic as `EvaluationType.ALL`:

- the run's calls become τ² messages: per call an `AssistantMessage` with one `ToolCall`
  (`requestor="assistant"`, ids `c0`, `c1`, …) and the `ToolMessage` that answered it, then a
  closing `AssistantMessage` `###STOP###` (the solo agent's stop);
- `EnvironmentEvaluator.calculate_reward(environment_constructor, task, full_trajectory,
  solo_mode=True)` replays them on a fresh environment (raising if any output differs) and runs
  the task's env assertions, when the reward basis has `DB` or `ENV_ASSERTION`;
- `ActionEvaluator.calculate_reward(task, full_trajectory)` checks the gold actions, when it has
  `ACTION`; `CommunicateEvaluator` when it has `COMMUNICATE`; an `NL_ASSERTION` basis is refused
  (it needs an LLM judge; no telecom task has one);
- the reward is their product; a task without evaluation criteria scores 1.

`tests/test_procedure_tau2.py` checks this against the rewards the recorded solo runs carry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from stretto_core.procedures.tau2.env import tau2_module

STOP_TEXT = "###STOP###"


@dataclass
class Reward:
    """The reward and its parts, as τ²-bench's `RewardInfo` has them."""

    reward: float
    parts: dict[str, float] = field(default_factory=dict)
    failed_assertions: list[str] = field(default_factory=list)


def messages_of(calls: list[tuple[str, dict[str, Any], str, bool]]) -> list[Any]:
    """τ² messages for a solo run's `(tool, arguments, content, error)` calls, ending in a stop."""
    message = tau2_module("tau2.data_model.message")
    out: list[Any] = []
    for i, (tool, arguments, content, error) in enumerate(calls):
        call_id = f"c{i}"
        out.append(message.AssistantMessage(role="assistant", content=None, tool_calls=[
            message.ToolCall(id=call_id, name=tool, arguments=dict(arguments), requestor="assistant")]))
        out.append(message.ToolMessage(id=call_id, role="tool", content=content, requestor="assistant", error=error))
    out.append(message.AssistantMessage(role="assistant", content=STOP_TEXT))
    return out


def task_reward(task: Any, calls: list[tuple[str, dict[str, Any], str, bool]],
                constructor: Callable[..., Any]) -> Reward:
    """The reward τ²-bench gives the run (solo mode) on `task`."""
    criteria = task.evaluation_criteria
    if criteria is None:
        return Reward(1.0)
    tasks = tau2_module("tau2.data_model.tasks")
    env_eval = tau2_module("tau2.evaluator.evaluator_env").EnvironmentEvaluator
    action_eval = tau2_module("tau2.evaluator.evaluator_action").ActionEvaluator
    comm_eval = tau2_module("tau2.evaluator.evaluator_communicate").CommunicateEvaluator
    R = tasks.RewardType
    basis = set(criteria.reward_basis)
    if R.NL_ASSERTION in basis:
        raise ValueError(f"task {task.id} needs the LLM judge (NL_ASSERTION)")
    trajectory = messages_of(calls)
    reward, parts, failed = 1.0, {}, []
    if basis & {R.DB, R.ENV_ASSERTION}:
        info = env_eval.calculate_reward(environment_constructor=constructor, task=task,
                                         full_trajectory=trajectory, solo_mode=True)
        parts["env"] = info.reward
        failed += [f"{c.env_assertion.func_name}{c.env_assertion.arguments}" for c in info.env_assertions or []
                   if not c.met]
        reward *= info.reward
    if R.ACTION in basis:
        info = action_eval.calculate_reward(task=task, full_trajectory=trajectory)
        parts["action"] = info.reward
        failed += [f"action {c.action.name}" for c in info.action_checks or [] if not c.action_match]
        reward *= info.reward
    if R.COMMUNICATE in basis:
        info = comm_eval.calculate_reward(task=task, full_trajectory=trajectory)
        parts["communicate"] = info.reward
        reward *= info.reward
    return Reward(reward, parts, failed)
