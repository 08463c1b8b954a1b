"""A scripted agent on an agent SDK's own MCP client, through the proxy, on recorded τ² episodes.

The same run as `scripted.py`, with the host an agent SDK instead of the bare `mcp` Client: the
OpenAI Agents SDK's `Runner` with its `ScriptedModel` (stretto's `EpisodePlayer` deciding each
turn) and its `MCPServerStdio` started on `stretto proxy -- python -m stretto_mcp.tau2_server`.
The SDK lists the tools through the proxy, runs each model turn's calls together, and hands the
model every content block of a result, the lookups' block included, which is what the player
reads. Nothing of stretto runs in the SDK's process: the proxy does all the serving.
Used by `tests/adapters/test_proxy_sdk_e2e.py` and `benchmarks/proxy_e2e.py --host openai-agents`;
`scripted.run_episodes(..., host="openai-agents")` runs several.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stretto_mcp.scripted import ProxiedRun, proxy_command, same_code_env, server_command


def _appended(agent_input: Any) -> int:
    """Tool outputs the model received with more than one text part (the result, then lookups)."""
    count = 0
    for item in agent_input if isinstance(agent_input, list) else ():
        if isinstance(item, dict) and item.get("type") == "function_call_output" and isinstance(item["output"], list):
            count += sum(1 for part in item["output"][1:] if isinstance(part, dict) and part.get("text"))
    return count


async def run_episode(session: Any, flow: Path | None, store: Path, *, theta: float = 0.3) -> ProxiedRun:
    """One recorded episode, played by the SDK's scripted model through its MCP client and the proxy."""
    from agents import Agent, Runner, SQLiteSession, set_tracing_disabled
    from agents.mcp import MCPServerStdio

    from stretto_core.evaluate.scripted import EpisodePlayer
    from stretto_openai_agents.testing import MAX_STEPS, OPENING, player_model

    set_tracing_disabled(True)
    player = EpisodePlayer(session)
    command = proxy_command(server_command(session), flow, store, theta)
    server = MCPServerStdio(params={"command": command[0], "args": command[1:], "env": same_code_env()}, cache_tools_list=True,
                            name="tau2-through-stretto", client_session_timeout_seconds=120)
    model = player_model(player)
    history = SQLiteSession(session.header.session_id)
    try:
        async with server:
            agent: Agent[Any] = Agent(name="retail-agent", instructions="Help the user.", model=model,
                                      mcp_servers=[server])
            for segment in player.segments():
                await Runner.run(agent, segment.user_text or OPENING, session=history, max_turns=MAX_STEPS)
    finally:
        history.close()
    seen: set[str] = set()
    appended = 0
    for call in model.calls:  # each model call's input holds the whole history: count each output once
        fresh = [i for i in call.input if isinstance(i, dict) and i.get("type") == "function_call_output"
                 and i["call_id"] not in seen] if isinstance(call.input, list) else []
        seen.update(i["call_id"] for i in fresh)
        appended += _appended(fresh)
    return ProxiedRun(session.header.session_id, player.llm_turns, player.recorded_turns, player.saved_turns,
                      appended)
