"""The cascade: the procedure first; on a hand-back, a model takes over from the procedure's state.

The model sees the ticket, every call the procedure made with its result, and the reason it
handed back, as messages, and goes on calling tools on the same live state until it answers
with no call. It is anything with `turn(context) -> ModelTurn` (a `Model`); each `turn` is one
LLM turn, which is what the cascade counts. Tests and benchmarks use scripted models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from stretto_core.procedures.ir import Procedure
from stretto_core.procedures.runtime import Call, RunResult, ToolSet, run_procedure

MAX_MODEL_TURNS = 40
"""A model that has not finished after this many turns is stopped."""


@dataclass
class ModelTurn:
    """One LLM turn: the calls it makes (none ends the model's part) and its text."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    text: str = ""


class Model(Protocol):
    """A model the cascade hands tickets to: one `turn` per LLM turn, on the messages so far."""

    def turn(self, context: list[dict[str, Any]]) -> ModelTurn:
        ...


@dataclass
class CascadeResult:
    """The procedure's run, the model's calls after it, every call in order, and LLM turns."""

    run: RunResult
    model_calls: list[Call]
    llm_turns: int
    verdict: str

    @property
    def calls(self) -> list[Call]:
        return list(self.run.calls) + list(self.model_calls)


def context_of(ticket: str, run: RunResult) -> list[dict[str, Any]]:
    """The model's context: the ticket, the procedure's calls and results, why it handed back."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": f"Ticket: {ticket}"}]
    for i, call in enumerate(run.calls):
        messages.append({"role": "assistant", "tool_calls": [{"id": f"p{i}", "name": call.tool,
                                                              "arguments": call.arguments}]})
        messages.append({"role": "tool", "id": f"p{i}", "name": call.tool, "content": call.content,
                         "error": call.error})
    messages.append({"role": "system", "content": f"A compiled procedure made the calls above and handed "
                                                  f"the ticket back: {run.reason}. Continue from here."})
    return messages


class ScriptedModel:
    """A model that plays back fixed turns, in order (then answers with no call)."""

    def __init__(self, turns: list[ModelTurn]) -> None:
        self.turns = list(turns)
        self.seen: list[list[dict[str, Any]]] = []

    def turn(self, context: list[dict[str, Any]]) -> ModelTurn:
        self.seen.append(list(context))
        return self.turns.pop(0) if self.turns else ModelTurn(text="done")


def run_cascade(procedure: Procedure, ticket: str, tools: ToolSet, model: Model,
                max_turns: int = MAX_MODEL_TURNS) -> CascadeResult:
    """Run the procedure; if it hands back, let the model finish the ticket."""
    run = run_procedure(procedure, ticket, tools)
    if run.verdict != "hand_back":
        return CascadeResult(run, [], 0, run.verdict)
    context = context_of(ticket, run)
    made: list[Call] = []
    turns = 0
    while turns < max_turns:
        turn = model.turn(context)
        turns += 1
        if not turn.calls:
            break
        ids = [f"m{len(made) + k}" for k in range(len(turn.calls))]
        context.append({"role": "assistant", "content": turn.text,
                        "tool_calls": [{"id": i, "name": t, "arguments": a} for i, (t, a) in zip(ids, turn.calls)]})
        for call_id, (tool, arguments) in zip(ids, turn.calls):
            try:
                content, error = tools.call(tool, dict(arguments))
            except Exception as exc:
                content, error = f"Error: {exc}", True
            made.append(Call(tool, dict(arguments), content, error, site="model", purpose="model"))
            context.append({"role": "tool", "id": call_id, "name": tool, "content": content, "error": error})
    verdict = "transferred" if any(c.tool == procedure.handoff and not c.error for c in made) else "model"
    return CascadeResult(run, made, turns, verdict)
