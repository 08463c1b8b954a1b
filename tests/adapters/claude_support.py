"""Helpers of the Claude adapter's tests: options for the offline CLI, client runs, τ² episodes end to end."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from stretto_claude import claude_hooks, exposed_name
from stretto_claude.testing import Reply, ScriptedMessagesAPI, received


def cli_options(api: ScriptedMessagesAPI, folder: str | Path, servers: dict[str, Any], hooks: Any = None,
                **extra: Any) -> Any:
    """Options that run the bundled CLI against `api`, with only the given MCP servers' tools."""
    from claude_agent_sdk import ClaudeAgentOptions

    config = Path(folder) / "claude-config"
    config.mkdir(parents=True, exist_ok=True)
    return ClaudeAgentOptions(mcp_servers=servers, hooks=hooks, tools=[], setting_sources=[],
                              allowed_tools=[f"mcp__{name}" for name in servers], cwd=str(folder),
                              env=api.env(config), max_turns=extra.pop("max_turns", 40), **extra)


async def run_client(prompts: Iterable[str], options: Any, hooks: Any = None) -> list[Any]:
    """One `ClaudeSDKClient` session, one `query()` per prompt; every message of the stream."""
    from claude_agent_sdk import ClaudeSDKClient

    messages: list[Any] = []
    async with ClaudeSDKClient(options=options) as client:
        for prompt in prompts:
            await client.query(prompt)
            stream = client.receive_response()
            async for message in (hooks.watch(stream) if hooks is not None else stream):
                messages.append(message)
    return messages


# -- end to end: a recorded τ² episode played by the real CLI against its real environment ------
TAU2_SERVER = "tau2"
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass
class EpisodeResult:
    """What one episode did under the CLI: LLM turns made and recorded, lookups, the session file."""

    session_id: str
    llm_turns: int
    recorded_turns: int
    saved_turns: int
    lookups: int
    requests: int
    session_files: list[Path] = field(default_factory=list)


def tau2_server(toolset: Any) -> Any:
    """The episode's real τ² tools as an in-process SDK MCP server, read-only hints from the manifest."""
    from claude_agent_sdk import SdkMcpTool, ToolAnnotations, create_sdk_mcp_server

    def handler(name: str) -> Any:
        async def run(args: dict[str, Any]) -> dict[str, Any]:
            text, error = await toolset.acall(name, args)
            return {"content": [{"type": "text", "text": text}], "is_error": error}
        return run

    tools = [SdkMcpTool(info.name, info.description, info.parameters, handler(info.name),
                        ToolAnnotations(readOnlyHint=info.read_only)) for info in toolset.tools]
    return create_sdk_mcp_server(TAU2_SERVER, tools=tools)


class EpisodeBrain:
    """The scripted model: each main-loop request gets the player's next turn, as tool_use blocks."""

    def __init__(self, player: Any) -> None:
        self.player = player

    def __call__(self, body: dict[str, Any]) -> Reply:
        outputs = [r.text for r in received(body)]
        turn = self.player.next_turn(outputs)
        calls = [(exposed_name(TAU2_SERVER, c.tool), dict(c.arguments)) for c in turn.calls]
        ids = [c.call_id if _SAFE_ID.match(c.call_id) else "toolu_" + uuid.uuid4().hex[:24] for c in turn.calls]
        return Reply(text=turn.text, calls=calls, ids=ids)


async def run_episode(session: Any, folder: Path, flow: Any = None, *, watch: bool = True) -> EpisodeResult:
    """Play one episode through the CLI, one client turn per user message; stretto serves `flow`
    (no hooks at all when `flow` is None)."""
    from claude_agent_sdk import ClaudeSDKClient
    from stretto_core.evaluate.scripted import EpisodePlayer, Tau2Toolset

    toolset = Tau2Toolset(session)
    player = EpisodePlayer(session)
    servers = {TAU2_SERVER: tau2_server(toolset)}
    store = folder / "sessions"
    hooks = None
    if flow is not None:
        hooks = claude_hooks(flow, mcp_servers=servers, store=store, app=session.header.app,
                             agent_model=session.header.agent_model, task_id=session.header.task_id)
    with ScriptedMessagesAPI(EpisodeBrain(player), lifetime=600) as api:
        options = cli_options(api, folder, servers, hooks, max_turns=500)
        async with ClaudeSDKClient(options=options) as client:
            for segment in player.segments():
                await client.query(segment.user_text or ".")
                stream = client.receive_response()
                async for _ in (hooks.watch(stream) if hooks is not None and watch else stream):
                    pass
    lookups = 0
    if hooks is not None:
        lookups = len(hooks.lookups)
        await hooks.aclose()
    return EpisodeResult(session.header.session_id, player.llm_turns, player.recorded_turns, player.saved_turns,
                         lookups, len(api.turns), sorted(store.glob("*.jsonl")))
