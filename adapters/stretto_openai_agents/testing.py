"""Play a recorded episode through the real SDK: a scripted model, the episode's real tools.

What the end-to-end test, the benchmark and the quickstart share. The model is the SDK's own
`agents.testing.ScriptedModel`; each of its steps asks a player (stretto's `EpisodePlayer`, or
anything with `segments()` and `next_turn(outputs)`) for the next turn, given the tool results
the model received since its previous call, lookups appended included. The tools are
`FunctionTool`s over a toolset (`tools` with name, description, parameters; `acall(name, args)`
returning `(text, is_error)`). Each user message of the episode is one `Runner.run` of one
conversation: an SDK `SQLiteSession` keeps its history, stretto's `session_key` its session.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, FunctionTool, Runner, SQLiteSession
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.usage import Usage

from stretto_openai_agents.instrument import instrument

MAX_STEPS = 400
"""Model calls one episode may make when the player does not say how many turns it has."""

OPENING = "(the conversation starts)"
"""The input of the first run when the recorded agent spoke before the user."""


@dataclass
class ToolsetTools:
    """Function tools over a toolset, and which of their calls erred (the toolset says)."""

    toolset: Any
    errors: dict[str, bool] = field(default_factory=dict)

    def tools(self) -> list[FunctionTool]:
        return [self._tool(info) for info in self.toolset.tools]

    def _tool(self, info: Any) -> FunctionTool:
        async def on_invoke_tool(ctx: Any, input: str) -> str:
            text, error = await self.toolset.acall(info.name, json.loads(input or "{}"))
            self.errors[ctx.tool_call_id] = bool(error)
            return text

        return FunctionTool(name=info.name, description=info.description, params_json_schema=info.parameters,
                            on_invoke_tool=on_invoke_tool, strict_json_schema=False)

    def error_results(self, ctx: Any, output: Any) -> bool:
        """For `StrettoOptions.error_results`: the toolset's own error flag of that call."""
        return self.errors.get(ctx.tool_call_id, False)

    def reads(self) -> list[str]:
        return [t.name for t in self.toolset.tools if getattr(t, "read_only", False)]


def player_model(player: Any) -> ScriptedModel:
    """A `ScriptedModel` whose every step is the player's next turn."""
    seen: set[str] = set()

    def respond(call: Any) -> ModelStep:
        new = []
        for item in call.input if isinstance(call.input, list) else ():
            if isinstance(item, dict) and item.get("type") == "function_call_output" and item["call_id"] not in seen:
                seen.add(item["call_id"])
                new.append(_text(item["output"]))
        turn = player.next_turn(new)
        output: list[Any] = [assistant_message(turn.text)] if turn.text or not turn.calls else []
        output += [function_call(c.tool, c.arguments, call_id=c.call_id) for c in turn.calls]
        size = sum(len(json.dumps(i, default=str)) for i in call.input) if isinstance(call.input, list) else 0
        usage = Usage(requests=1, input_tokens=size // 4, output_tokens=8 + len(turn.text) // 4)
        return ModelStep(output=output, usage=usage)

    recorded = getattr(player, "recorded_turns", None)
    steps = MAX_STEPS if recorded is None else 2 * recorded + 8  # every turn, and a closing one per run
    return ScriptedModel([ModelStep.respond(respond) for _ in range(steps)])


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return "\n".join(p.get("text", "") for p in output if isinstance(p, dict))


async def play_episode(player: Any, toolset: Any, episode_id: str, *,
                       serve: Callable[[Agent[Any], ToolsetTools], Agent[Any]] | None = None) -> Agent[Any]:
    """Run every segment of `player`'s episode through `Runner.run`; `serve` instruments the agent."""
    tools = ToolsetTools(toolset)
    agent: Agent[Any] = Agent(name="retail-agent", instructions="Help the user.", model=player_model(player),
                              tools=tools.tools())
    if serve is not None:
        agent = serve(agent, tools)
    history = SQLiteSession(episode_id)
    try:
        for segment in player.segments():
            await Runner.run(agent, segment.user_text or OPENING, session=history,
                             context={"episode": episode_id}, max_turns=MAX_STEPS)
    finally:
        history.close()
    return agent


def stretto_serving(flow: Any, store: Any, **options: Any) -> Callable[[Agent[Any], ToolsetTools], Agent[Any]]:
    """`serve` for `play_episode`: stretto with `flow`, the toolset's reads and errors, one session
    per episode (`session_key="episode"` over the run context)."""

    def serve(agent: Agent[Any], tools: ToolsetTools) -> Agent[Any]:
        return instrument(agent, flow=flow, reads=tools.reads(), store=store, session_key="episode",
                          error_results=tools.error_results, **options)

    return serve
