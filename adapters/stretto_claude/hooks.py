"""The Claude Agent SDK's hooks, wired to stretto: `ClaudeAgentOptions(hooks=claude_hooks(...))`.

Claude Code runs the agent loop in its own process and calls back into Python for hooks and for
in-process (SDK) MCP tools. After each tool call the PostToolUse hook records the result, makes
the flow's lookups through the in-process servers' own tools, and hands back the result with
the lookups appended in the tool's own output shape. UserPromptSubmit records the user's words,
Stop the reply that ended the run. One stretto session per Claude session id (a subagent gets
its own). Whatever goes wrong in here, the hook answers `{}` and the agent's result stands.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Mapping

from typing_extensions import Unpack

from stretto_core import LiveSession, Lookup, Stretto, ToolCall, ToolKind, ToolManifest, Usage, manifest_from_mcp_tools
from stretto_core.serve.options import ServingKnobs

from stretto_claude.names import PREFIX, ToolNames, exposed_name
from stretto_claude.servers import InProcessServers
from stretto_claude.shapes import additional_context, augmented_output, shown_text
from stretto_claude.turns import StreamTurn, StreamTurns

log = logging.getLogger("stretto.claude")

HARNESS = "claude-agent-sdk"
CATCH_UP = 3
"""Event-loop turns a hook yields to let a watched stream deliver the turn it is about to record."""

Hook = Callable[[Any, "str | None", Any], Awaitable[dict[str, Any]]]


@dataclass
class _Session:
    live: LiveSession
    names: ToolNames
    _lock: asyncio.Lock | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    def lock(self) -> asyncio.Lock:
        """One tool result at a time per session, on whichever loop runs it (a Claude session can
        outlive an event loop: `asyncio.run` per user turn with `resume=`)."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._loop is not loop:
            self._lock, self._loop = asyncio.Lock(), loop
        return self._lock


class ClaudeHooks(dict):
    """The `hooks=` mapping for `ClaudeAgentOptions`, and the stretto state behind it.

    `.sessions` holds one `LiveSession` per Claude session id; `.watch(stream)` lets the hooks
    record whole model turns from the SDK's message stream; `.close()` ends every session file.
    """

    def __init__(self, stretto: Stretto, servers: InProcessServers, *, task_id: str | None = None,
                 labels: dict[str, str] | None = None, hook_timeout: float | None = None) -> None:
        from claude_agent_sdk import HookMatcher

        self.stretto = stretto
        self.servers = servers
        self.task_id = task_id
        self.labels = dict(labels or {})
        self.turns = StreamTurns()
        self.sessions: dict[str, LiveSession] = {}
        self._state: dict[str, _Session] = {}
        self._opening: dict[str, asyncio.Future[_Session]] = {}
        timeout = hook_timeout if hook_timeout is not None else stretto.limits.call_budget + 5.0
        super().__init__({
            "UserPromptSubmit": [HookMatcher(hooks=[self.on_user_prompt])],
            "PostToolUse": [HookMatcher(hooks=[self.on_post_tool_use], timeout=timeout)],
            "PostToolUseFailure": [HookMatcher(hooks=[self.on_post_tool_use_failure], timeout=timeout)],
            "Stop": [HookMatcher(hooks=[self.on_stop])],
        })

    def add_to(self, into: Any) -> Any:
        """Append these hooks, per event, to a `ClaudeAgentOptions`'s hooks (or to a hooks
        mapping, in place), after the ones already there; returns `into`."""
        if isinstance(into, dict) and not hasattr(into, "hooks"):
            for event, matchers in self.items():
                into.setdefault(event, []).extend(matchers)
            return into
        if not hasattr(into, "hooks"):
            raise TypeError(f"into= takes a ClaudeAgentOptions or a hooks dict, not {type(into).__name__}")
        into.hooks = merged_hooks(into.hooks, self)
        return into

    # -- the hooks ---------------------------------------------------------------------------
    async def on_user_prompt(self, data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        """UserPromptSubmit: the user's words."""
        try:
            session = await self._session(data)
            session.live.user(str(data.get("prompt") or ""))
        except Exception as exc:  # noqa: BLE001 - a hook never breaks the agent
            log.warning("stretto: could not record a user prompt: %s", exc)
        return {}

    async def on_post_tool_use(self, data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        """PostToolUse: record the result, make the lookups, append them in the tool's shape."""
        try:
            session = await self._session(data)
            name = str(data.get("tool_name") or "")
            call_id = str(data.get("tool_use_id") or tool_use_id or "")
            output = data.get("tool_response")
            await self._announce(data, session, call_id)
            async with session.lock():
                fresh = await self._relist(session)
                appendix = await session.live.after_tool(call_id, session.names.bare(name),
                                                         dict(data.get("tool_input") or {}), shown_text(output),
                                                         self._caller(session.names), error=False, serve=fresh)
            return augmented_output(output, appendix, mcp=name.startswith(PREFIX))
        except Exception as exc:  # noqa: BLE001
            log.warning("stretto: PostToolUse of %s skipped: %s", data.get("tool_name"), exc)
            return {}

    async def on_post_tool_use_failure(self, data: Any, tool_use_id: str | None,
                                       context: Any) -> dict[str, Any]:
        """PostToolUseFailure: the error is the result; lookups come as context right after it."""
        try:
            session = await self._session(data)
            name = str(data.get("tool_name") or "")
            call_id = str(data.get("tool_use_id") or tool_use_id or "")
            await self._announce(data, session, call_id)
            async with session.lock():
                fresh = await self._relist(session)
                appendix = await session.live.after_tool(call_id, session.names.bare(name),
                                                         dict(data.get("tool_input") or {}),
                                                         str(data.get("error") or ""), self._caller(session.names),
                                                         error=True, serve=fresh)
            return additional_context("PostToolUseFailure", appendix)
        except Exception as exc:  # noqa: BLE001
            log.warning("stretto: PostToolUseFailure of %s skipped: %s", data.get("tool_name"), exc)
            return {}

    async def on_stop(self, data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        """Stop: the reply that ended this run of the agent."""
        try:
            session = await self._session(data)
            claude_id = str(data.get("session_id") or "")
            turn = await self._caught_up(claude_id, lambda: self.turns.take_reply(claude_id))
            if turn is not None:
                session.live.llm_turn(text="".join(turn.text), usage=_usage(turn))
            elif "last_assistant_message" in data:
                session.live.llm_turn(text=str(data.get("last_assistant_message") or ""))
        except Exception as exc:  # noqa: BLE001
            log.warning("stretto: could not record the reply: %s", exc)
        return {}

    # -- the message stream (optional) ---------------------------------------------------------
    def observe(self, message: Any) -> None:
        """Show the hooks one message of the SDK's stream, so they record whole turns with usage."""
        try:
            self.turns.observe(message)
        except Exception as exc:  # noqa: BLE001
            log.debug("stretto: skipped a message of the stream: %s", exc)

    async def watch(self, messages: AsyncIterable[Any]) -> AsyncIterator[Any]:
        """`async for m in hooks.watch(query(...))`: the same messages, observed on the way."""
        async for message in messages:
            self.observe(message)
            yield message

    # -- results -------------------------------------------------------------------------------
    @property
    def lookups(self) -> list[Lookup]:
        """Every lookup made so far, in all sessions."""
        return [lk for live in self.sessions.values() for lk in live.lookups]

    def close(self) -> None:
        """Write what waits in every session; the files stay readable."""
        for live in self.sessions.values():
            live.close()

    async def aclose(self) -> None:
        """`close()`, and disconnect from the in-process servers."""
        self.close()
        await self.servers.aclose()

    # -- the work ------------------------------------------------------------------------------
    async def _session(self, data: Any) -> _Session:
        claude_id = str(data.get("session_id") or "")
        if not claude_id:  # no session id: never share another conversation's session
            claude_id = f"unknown-{uuid.uuid4().hex[:12]}"
        key = claude_id if not data.get("agent_id") else f"{claude_id}.{data['agent_id']}"
        known = self._state.get(key)
        if known is not None:
            return known
        opening = self._opening.get(key)
        if opening is None or opening.get_loop() is not asyncio.get_running_loop():
            opening = self._opening[key] = asyncio.ensure_future(self._open(key, claude_id))
        try:
            return await asyncio.shield(opening)
        except Exception:
            if self._opening.get(key) is opening:
                del self._opening[key]  # the next hook tries again
            raise

    async def _open(self, key: str, claude_id: str) -> _Session:
        listing = await self.servers.listing()
        names = ToolNames.build(self.servers.names, {s: [t.name for t in tools] for s, tools in listing.items()})
        manifest = self._manifest(listing, names)
        live = self.stretto.session(key, tools=manifest,
                                    agent_model=self.stretto.agent_model or self.turns.models.get(claude_id),
                                    task_id=self.task_id, labels=self.labels or None)
        session = self._state[key] = _Session(live, names)
        self.sessions[key] = live
        self._opening.pop(key, None)
        return session

    async def _relist(self, session: _Session) -> bool:
        """Read the in-process servers' tools again before a lookup round, so the guard decides
        on the listing as it is *now* (a tool re-annotated destructive since the last call is
        never looked up). False when the listing cannot be read in time: no lookup then."""
        timeout = max(self.stretto.limits.lookup_timeout, 0.05)
        try:
            listing = await asyncio.wait_for(self.servers.listing(strict=True), timeout)
        except (asyncio.TimeoutError, Exception) as exc:  # noqa: BLE001 - no fresh listing, no lookup
            log.warning("stretto: the in-process MCP servers could not be listed (%s); no lookup after "
                        "this call", type(exc).__name__ if not str(exc) else exc)
            return False
        session.live.update_tools(self._manifest(listing, session.names))
        return True

    def _manifest(self, listing: Mapping[str, list[Any]], names: ToolNames) -> ToolManifest:
        """This session's tools as their servers list them, under their bare names.

        A tool with no read/write hint keeps the kind the operator declared (its hint is no
        authority either way); a tool declared read that no in-process server serves alone is
        marked generic, since no lookup of it could be made.
        """
        wire = []
        for server, tools in listing.items():
            for tool in tools:
                bare = names.bare(exposed_name(server, tool.name))
                if names.route(bare) is None:
                    continue
                wire.append({"name": bare, "annotations": getattr(tool, "annotations", None),
                             "inputSchema": getattr(tool, "input_schema", None),
                             "description": getattr(tool, "description", None)})
        manifest = manifest_from_mcp_tools(wire, app=self.stretto.app)
        declared = self.stretto.authority
        tools = {}
        for name, spec in manifest.tools.items():
            if spec.kind is ToolKind.generic and declared.kind(name) is not ToolKind.generic:
                spec = spec.model_copy(update={"kind": declared.kind(name)})
            tools[name] = spec
        manifest = manifest.model_copy(update={"tools": tools})
        unserved = [t for t in declared.reads() if names.route(t) is None]
        if unserved:
            log.info("stretto: declared reads no in-process MCP server serves are never looked up: %s",
                     ", ".join(unserved))
            manifest = manifest.merged(ToolManifest.declare(generic=unserved))
        return manifest

    def _caller(self, names: ToolNames) -> Callable[[str, dict[str, Any]], Awaitable[Any]]:
        servers = self.servers

        async def call_tool(tool: str, arguments: dict[str, Any]) -> Any:
            route = names.route(tool)
            if route is None:
                raise LookupError(f"no in-process MCP server serves {tool}")
            return await servers.call(route.server, route.tool, arguments)

        return call_tool

    async def _announce(self, data: Any, session: _Session, call_id: str) -> None:
        """Record the model turn that made this call, when the watched stream showed it."""
        if data.get("agent_id"):
            return
        claude_id = str(data.get("session_id") or "")
        turn = await self._caught_up(claude_id, lambda: self.turns.take_for_call(claude_id, call_id))
        if turn is None:
            return  # the live session infers a turn from the call (marked inferred)
        calls = [ToolCall(call_id=c.call_id, tool=session.names.bare(c.name), arguments=c.arguments)
                 for c in turn.calls]
        session.live.llm_turn(text="".join(turn.text), calls=calls, usage=_usage(turn))

    async def _caught_up(self, claude_id: str, take: Callable[[], StreamTurn | None]) -> StreamTurn | None:
        turn = take()
        if turn is None and claude_id in self.turns.watched:
            for _ in range(CATCH_UP):
                await asyncio.sleep(0)
                turn = take()
                if turn is not None:
                    break
        return turn


def _usage(turn: StreamTurn) -> Usage | None:
    return Usage(input_tokens=turn.input_tokens) if turn.input_tokens is not None else None


def claude_hooks(flow: Any = None, *, mcp_servers: Mapping[str, Any] | None = None,
                 stretto: Stretto | None = None, reads: Iterable[str] = (), writes: Iterable[str] = (),
                 manifest: ToolManifest | str | Path | None = None, store: str | Path | bool | None = None,
                 agent_model: str | None = None, app: str | None = None, task_id: str | None = None,
                 labels: dict[str, str] | None = None, hook_timeout: float | None = None,
                 into: Any = None, **options: Unpack[ServingKnobs]) -> ClaudeHooks:
    """Hooks that serve `flow` to a Claude agent whose tools are `mcp_servers` (the same mapping
    as `ClaudeAgentOptions.mcp_servers`).

    `into=`: a `ClaudeAgentOptions` (or a hooks mapping) that already has hooks of its own:
    stretto's matchers are appended to its list for each event, after the user's, so both run
    (a plain `{**theirs, **ours}` would drop one side's PostToolUse list); its `mcp_servers` are
    the tools when `mcp_servers` is not given.

    Which tools are reads: the in-process servers' own `ToolAnnotations(readOnlyHint=...)`,
    `reads=[...]`/`writes=[...]`, or a `manifest`; a tool none of them marks read is never
    looked up. `options` go to `Stretto` (theta, per_call, per_session, lookup_timeout,
    call_budget, allow, deny, shadow). Pass `stretto=` to share one `Stretto` between hooks.

    mcp_servers: the agent's MCP servers, as `ClaudeAgentOptions.mcp_servers` (the in-process
    ones are the tools lookups may call).

    stretto: a ready `Stretto` to share between hooks, instead of the flow and its options.

    task_id: the task id written into each session's header.

    labels: free-form labels written into each session's header.

    hook_timeout: seconds the SDK waits for stretto's tool hooks (default: `call_budget` + 5).
    """
    if mcp_servers is None and into is not None and isinstance(getattr(into, "mcp_servers", None), Mapping):
        mcp_servers = into.mcp_servers
    if stretto is None:
        stretto = Stretto(flow, reads=reads, writes=writes, manifest=manifest, store=store, harness=HARNESS,
                          agent_model=agent_model, app=app, **options)
    hooks = ClaudeHooks(stretto, InProcessServers(mcp_servers), task_id=task_id, labels=labels,
                        hook_timeout=hook_timeout)
    if into is not None:
        hooks.add_to(into)
    return hooks


def merged_hooks(theirs: Mapping[str, Any] | None, ours: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Two `hooks=` mappings as one: per event, their matchers first, then ours."""
    merged: dict[str, list[Any]] = {event: list(matchers) for event, matchers in (theirs or {}).items()}
    for event, matchers in ours.items():
        merged.setdefault(event, []).extend(matchers)
    return merged
