"""What every adapter and the proxy share: a served flow, the authority on reads, the recorder.

An adapter translates its SDK's hook into three calls: `user(...)` and `llm_turn(...)` when the
SDK shows them, and `await after_tool(...)` after each of the agent's tool calls, which records
the result, makes the flow's lookups with the agent's own tool function, records them, and
returns the text to append inside that same result. Everything else (budgets, time limits, the
guard, the fence, noticing that the agent repeated a lookup) lives here, once.

Safety: a lookup is made only of a tool that the flow marks read *and* an independent authority
marks read: `reads=[...]` declared in code, a manifest file the operator passes, or the SDK's
own annotations (`tools=` per session). The flow file alone is never enough; with no authority
stretto records but makes no lookup, and says so once.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Sequence

from stretto_core.paths import stretto_home
from stretto_core.serve.defaults import (CALL_BUDGET, DEFAULT_THETA, LOOKUP_TIMEOUT, MAX_LOOKUPS_PER_CALL,
                                         MAX_LOOKUPS_PER_SESSION)

if TYPE_CHECKING:  # at run time `_machinery()` binds these when the first `Stretto` starts
    import asyncio

    from stretto_core.flow.ir import Flow
    from stretto_core.serve.engine import Engine, EngineConfig, EngineSession
    from stretto_core.serve.lookups import AsyncCallTool, Limits, SyncCallTool, run_lookups_async, run_lookups_sync
    from stretto_core.serve.options import StrettoOptions
    from stretto_core.serve.reload import FlowWatcher, LoadedFlow, in_memory
    from stretto_core.serve.results import (RECORDED_RESULT_CHARS, fenced_appendix, is_error_result, new_fence,
                                           result_text, result_text_cut)
    from stretto_core.serve.runtime import FlowRuntime
    from stretto_core.serve.telemetry import NativeSpans, SessionSpans, timed_async, timed_sync, trigger
    from stretto_core.sessions.manifest import ToolManifest, load_manifest
    from stretto_core.sessions.model import (Lookup, LLMTurn, Refusal, RefusalReason, SessionHeader, SessionMode,
                                            ShadowLookup, ToolCall, ToolResult, Usage, UserMessage,
                                            parse_json_content)
    from stretto_core.sessions.recorder import SessionRecorder


def _machinery() -> None:
    """Import the serving machinery (the engine, the flow and session models, the recorder) into
    this module, once, when the first `Stretto` starts: `from stretto_core import Stretto` then
    costs an adapter's import little (the models' construction is most of a cold start;
    `benchmarks/footprint.py --quick`), and every `Stretto` pays it once, at construction."""
    if "Engine" in globals():
        return
    from stretto_core.flow.ir import Flow, load_flow
    from stretto_core.serve.engine import Engine, EngineConfig, EngineSession
    from stretto_core.serve.lookups import Limits, run_lookups_async, run_lookups_sync
    from stretto_core.serve.options import StrettoOptions
    from stretto_core.serve.reload import FlowWatcher, LoadedFlow, in_memory
    from stretto_core.serve.results import (RECORDED_RESULT_CHARS, fenced_appendix, is_error_result, new_fence,
                                           result_text, result_text_cut)
    from stretto_core.serve.runtime import FlowRuntime
    from stretto_core.serve.telemetry import SessionSpans, timed_async, timed_sync, trigger
    from stretto_core.sessions.manifest import ToolManifest, load_manifest
    from stretto_core.sessions.model import (Lookup, LLMTurn, Refusal, SessionHeader, ShadowLookup, ToolCall,
                                            ToolResult, Usage, UserMessage, parse_json_content)
    from stretto_core.sessions.recorder import SessionRecorder

    globals().update(locals())  # every name above, bound at once


log = logging.getLogger("stretto")

NO_AUTHORITY = ("stretto: no tool is known to be a read (declare reads=[...], pass a manifest, or "
                "serve tools whose annotations mark them read-only), so no lookup is made; sessions "
                "are still recorded")


DISABLED_ENV = "STRETTO_DISABLED"
"""Set to 1 (or true, yes, on): every session starting now is recorded and served nothing."""

SHADOW_ENV = "STRETTO_SHADOW"
"""Set to 1 (or true, yes, on): every session starting now is a shadow session."""


def env_switch(name: str) -> bool:
    """Whether an environment switch is on, read now (per session, not once per process)."""
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def day_one_note(flow: Path, store: Path | None) -> str:
    """What a first run is told once: nothing to serve yet, where sessions go, what to run next."""
    where = f"recording sessions to {store}" if store is not None else "recording nothing (store=False)"
    learn = f"stretto learn {store} --out {flow}" if store is not None else f"stretto learn SESSIONS --out {flow}"
    return (f"stretto: no flow at {flow} yet, so nothing is served: {where}. After some sessions run "
            f"`{learn}`; new sessions serve it from then on, without a restart")


def default_store() -> Path:
    """Where sessions go when the user names no folder: `.stretto/sessions`."""
    return stretto_home() / "sessions"


class Stretto:
    """A flow served to every live session of one app, with its guard and its session store.

    The keyword arguments are the fields of `StrettoOptions` (`serve/options.py`), checked there
    once, so every adapter accepts and refuses the same values:
    `flow`: a `Flow` or the path of a flow file; None records sessions without serving.
    `reads` / `writes` / `manifest`: the authority on tool kinds (see the module docstring).
    `store`: a folder for sessions (default `.stretto/sessions`), or False to record nothing.
    """

    def __init__(self, flow: Flow | str | Path | None = None, *, reads: Iterable[str] = (),
                 writes: Iterable[str] = (), manifest: ToolManifest | str | Path | None = None,
                 store: str | Path | bool | None = None, harness: str = "custom",
                 agent_model: str | None = None, app: str | None = None, theta: float = DEFAULT_THETA,
                 policy: str = "use", per_call: int = MAX_LOOKUPS_PER_CALL,
                 per_session: int = MAX_LOOKUPS_PER_SESSION, lookup_timeout: float = LOOKUP_TIMEOUT,
                 call_budget: float = CALL_BUDGET, allow: Iterable[str] | None = None,
                 deny: Iterable[str] = (), shadow: bool = False, holdout: float = 0.0,
                 retain_days: float | None = None, redact_fields: Iterable[str] = ()) -> None:
        _machinery()
        self._start(StrettoOptions(flow=flow, reads=reads, writes=writes, manifest=manifest, store=store,
                                   harness=harness, agent_model=agent_model, app=app, theta=theta, policy=policy,
                                   per_call=per_call, per_session=per_session, lookup_timeout=lookup_timeout,
                                   call_budget=call_budget, allow=allow, deny=deny, shadow=shadow,
                                   holdout=holdout, retain_days=retain_days, redact_fields=redact_fields))

    @classmethod
    def from_options(cls, options: StrettoOptions) -> "Stretto":
        """A `Stretto` serving with options already checked (an adapter's own options object)."""
        stretto = cls.__new__(cls)
        stretto._start(options)
        return stretto

    def _start(self, options: StrettoOptions) -> None:
        _machinery()
        self.options = options
        declared = ToolManifest.declare(options.app, reads=options.reads, writes=options.writes)
        manifest = options.manifest
        given = load_manifest(manifest) if isinstance(manifest, (str, Path)) else manifest
        self.authority = declared if given is None else given.merged(declared)
        self.deny = frozenset(options.deny)
        self.limits = Limits(options.lookup_timeout, options.call_budget)
        self.harness = options.harness
        self.agent_model = options.agent_model
        self.app = options.app
        store = options.store
        if store is False:
            self.store: Path | None = None
        else:
            self.store = default_store() if store in (None, True) else Path(store)  # type: ignore[arg-type]
        if self.store is not None and options.retain_days is not None:
            from stretto_core.sessions.retention import prune_at_start

            prune_at_start(self.store, options.retain_days)
        self.field_hasher: Any = None
        if options.redact_fields:
            from stretto_core.sessions.redact import FieldHasher, key_from_env

            self.field_hasher = FieldHasher(key_from_env(), options.redact_fields)
        self._config = EngineConfig(theta=options.theta, policy=options.policy, per_call=options.per_call,
                                    per_session=options.per_session, allow=options.serving_allowlist())
        self._holdout_draw = random.Random()
        self.watcher: FlowWatcher[Engine] | None = None
        self._fixed: LoadedFlow[Engine] | None = None
        flow = options.flow
        if isinstance(flow, (str, Path)):
            self.watcher = FlowWatcher(flow, self._engine_of)
            if self.watcher.start() is None:
                log.info(day_one_note(Path(flow), self.store))
        elif flow is not None:
            self._fixed = in_memory(flow, self._engine_of(flow))
        self._warned = False
        self.native_spans: NativeSpans | None = None
        """An SDK's own tracing, for one span per lookup beside OpenTelemetry's (`serve/telemetry.py`)."""

    def _engine_of(self, flow: Flow) -> Engine:
        return Engine(FlowRuntime(flow), self._config)

    @property
    def flow(self) -> Flow | None:
        """The flow a session starting now serves (the flow file checked again: one `stat`)."""
        loaded = self.serving_now()
        return None if loaded is None else loaded.flow

    @property
    def engine(self) -> Engine | None:
        """The engine of `flow`, or None when there is no flow to serve yet."""
        loaded = self._fixed if self.watcher is None else self.watcher.loaded
        return None if loaded is None else loaded.built

    def serving_now(self) -> LoadedFlow[Engine] | None:
        """The flow a session starting now serves: the flow file's newest loadable version
        (`serve/reload.py`), or the flow given as an object."""
        return self._fixed if self.watcher is None else self.watcher.current()

    def mode_now(self, loaded: LoadedFlow[Engine] | None) -> SessionMode:
        """How a session starting now is treated: the environment's switches first
        (`STRETTO_DISABLED=1` serves nothing, `STRETTO_SHADOW=1` shadows), read per session, so an
        operator changes behaviour without a redeploy; then the options (`holdout`, `shadow`)."""
        if loaded is None or env_switch(DISABLED_ENV):
            return "record"
        if self.options.holdout and self._holdout_draw.random() < self.options.holdout:
            return "holdout"
        if self.options.shadow or env_switch(SHADOW_ENV):
            return "shadow"
        return "serve"

    def session(self, session_id: str | None = None, *, tools: ToolManifest | None = None,
                agent_model: str | None = None, task_id: str | None = None,
                labels: dict[str, str] | None = None, solo: bool = False) -> "LiveSession":
        """A new live session; `tools` is what the SDK says of this session's tools (annotations).
        `solo`: no user speaks (the flow serves each mode by its own sessions, `flow/modes.py`)."""
        live = self._live_manifest(tools)
        return LiveSession(self, session_id or uuid.uuid4().hex, live, agent_model or self.agent_model,
                           task_id, labels or {}, solo)

    def _live_manifest(self, tools: ToolManifest | None) -> ToolManifest:
        live = self.authority if tools is None else tools.merged(self.authority)
        for name in self.deny:
            live = live.merged(ToolManifest.declare(writes=[name]))
        return live

    def _warn_no_authority(self) -> None:
        if not self._warned:
            self._warned = True
            log.warning(NO_AUTHORITY)


class LiveSession:
    """One agent session as an adapter serves it: engine state, recorder, lookups outstanding."""

    def __init__(self, owner: Stretto, session_id: str, live: ToolManifest, agent_model: str | None,
                 task_id: str | None, labels: dict[str, str], solo: bool = False) -> None:
        self.owner = owner
        self.session_id = session_id
        self.solo = solo
        self.tools = live
        self.fence = new_fence()
        self.lookups: list[Lookup] = []
        self._announced: set[str] = set()
        self._outstanding: dict[Hashable, str] = {}  # canonical call -> lookup call id, until a write
        self._alock: asyncio.Lock | None = None
        self._alock_loop: asyncio.AbstractEventLoop | None = None
        self._tlock = threading.Lock()
        self.engine_session: EngineSession | None = None
        self._stopped = False  # serving stopped for good: an event broke the engine's state
        self.recorder: SessionRecorder | None = None
        served = owner.serving_now()
        self.mode: SessionMode = owner.mode_now(served)
        self.served_flow = served
        """The flow version this session serves (or shadows) to its end, whatever is committed meanwhile."""
        self.engine: Engine | None = None if served is None or self.mode in ("record", "holdout") else served.built
        self.shadow = self.mode == "shadow"
        if owner.store is not None:
            header = SessionHeader(session_id=session_id, harness=owner.harness, agent_model=agent_model,
                                   app=owner.app, manifest=live if live.tools else None,
                                   task_id=task_id, labels=labels, solo=solo, mode=self.mode,
                                   flow_version=served.version if self.engine is not None else None,
                                   flow_sha256=served.sha256 if self.engine is not None else None)
            self.recorder = SessionRecorder(owner.store, header)
            log.info("stretto: session %s: %s%s, recording to %s", session_id, self.mode,
                     "" if served is None or self.mode == "record" else
                     f" with flow v{served.version if served.version is not None else '?'}", self.recorder.path)
        self.spans = SessionSpans(session_id, owner.native_spans)
        if self.engine is not None:
            if live.reads():
                self._start_serving()
            else:
                owner._warn_no_authority()

    # -- what the SDK shows ------------------------------------------------------------------
    def user(self, text: str) -> None:
        """The user's message."""
        self._seen(UserMessage(text=text, at=self._stamp()))

    def llm_turn(self, text: str = "", calls: Sequence[ToolCall] = (), usage: Usage | None = None,
                 *, inferred: bool | None = None) -> None:
        """One model turn: its text and the calls it made (none for a reply). `inferred=True` when
        the adapter saw no model turn and estimated this one (a proxy grouping calls by timing)."""
        for call in calls:
            self._announced.add(call.call_id)
        self._seen(LLMTurn(text=text, calls=list(calls), usage=usage, inferred=inferred, at=self._stamp()))

    def update_tools(self, tools: ToolManifest) -> None:
        """The server's tools changed mid-session (an MCP `list_changed`): from the next decision
        on, the guard checks the new kinds and contracts (the authority and denylist still apply).
        A listing that changed nothing changes nothing (adapters re-read listings before each round)."""
        live = self.owner._live_manifest(tools)
        if live == self.tools:
            return
        self.tools = live
        if self.engine_session is not None and self.engine is not None:
            self.engine_session.guard = self.engine.guard_for(self.tools)
        elif self.engine is not None and not self._stopped and self.tools.reads():
            self._start_serving()  # the session opened before any tool was known to be a read

    def _start_serving(self) -> None:
        assert self.engine is not None
        self.engine_session = self.engine.session(live_manifest=self.tools, solo=self.solo)
        self.engine_session.note_refusals = self.recorder is not None

    def refused(self, tool: str, reason: RefusalReason, detail: str = "", *, lifted: bool | None = None) -> None:
        """A guard outside the engine (a proxy's listing) stops, or again allows, lookups of `tool`:
        the recorded session says so, as a `refusal` event."""
        self._event(Refusal(tool=tool, reason=reason, detail=detail, lifted=lifted))

    async def after_tool(self, call_id: str, tool: str, arguments: dict[str, Any], output: Any,
                         call_tool: AsyncCallTool, *, error: bool | None = None, serve: bool = True,
                         trace: dict[str, Any] | None = None) -> str:
        """Record the agent's result, make the flow's lookups, and return the text to append.

        `serve=False` records and takes in the result but makes no lookup (for a result the SDK
        gives stretto no way to append to). `trace`: a W3C `traceparent` carrier that names the
        call's span (a proxy's `_meta`); else the lookups' spans are children of the current one."""
        trig = trigger(call_id, tool, trace, self.owner.native_spans)
        import asyncio  # here, not at the top: a sync app's import of stretto never pays for asyncio

        loop = asyncio.get_running_loop()
        if self._alock is None or self._alock_loop is not loop:  # a conversation may span loops
            self._alock, self._alock_loop = asyncio.Lock(), loop
        async with self._alock:  # parallel calls of one turn are absorbed one after another
            result = self._take_result(call_id, tool, arguments, output, error)
            made: list[Lookup] = []
            if self.shadow:
                return self._finish(result, [], None, self._would(call_id, serve))
            if serve and self.engine_session is not None:
                try:
                    made = await run_lookups_async(self.engine_session, call_id, timed_async(trig, call_tool),
                                                   self.owner.limits)
                except Exception as exc:  # noqa: BLE001 - stretto never breaks the agent's call
                    log.warning("stretto: lookups after %s failed and were skipped: %s", tool, exc)
            return self._finish(result, made, trig)

    def after_tool_sync(self, call_id: str, tool: str, arguments: dict[str, Any], output: Any,
                        call_tool: SyncCallTool, *, error: bool | None = None, serve: bool = True,
                        trace: dict[str, Any] | None = None) -> str:
        """The same for a sync SDK path."""
        trig = trigger(call_id, tool, trace, self.owner.native_spans)
        with self._tlock:
            result = self._take_result(call_id, tool, arguments, output, error)
            made: list[Lookup] = []
            if self.shadow:
                return self._finish(result, [], None, self._would(call_id, serve))
            if serve and self.engine_session is not None:
                try:
                    made = run_lookups_sync(self.engine_session, call_id, timed_sync(trig, call_tool),
                                            self.owner.limits)
                except Exception as exc:  # noqa: BLE001
                    log.warning("stretto: lookups after %s failed and were skipped: %s", tool, exc)
            return self._finish(result, made, trig)

    def close(self) -> None:
        """Write what waits; the session file stays readable whatever happened before."""
        self.spans.settled("session_end")
        if self.recorder is not None:
            self.recorder.close()

    # -- the work ------------------------------------------------------------------------------
    def _take_result(self, call_id: str, tool: str, arguments: dict[str, Any], output: Any,
                     error: bool | None) -> ToolResult:
        if call_id not in self._announced:  # the SDK showed no model turn: infer one from the call
            self._announced.add(call_id)
            self._seen(LLMTurn(calls=[ToolCall(call_id=call_id, tool=tool, arguments=dict(arguments))],
                               inferred=True, at=self._stamp()))
        if isinstance(output, tuple) and len(output) == 2 and isinstance(output[1], bool):
            output, error = output[0], output[1] if error is None else error
        content, cut = result_text_cut(output, RECORDED_RESULT_CHARS)
        failed = is_error_result(output) if error is None else error
        key = _call_key(tool, arguments)
        repeats = self._outstanding.pop(key, None)
        if repeats is not None:
            self.spans.repeated(repeats)
        if self.tools.ends_reach(tool):
            self._outstanding.clear()  # a write (or a tool of unknown kind) ends every lookup's reach
            self.spans.settled()
        result = ToolResult(call_id=call_id, tool=tool, content=content,
                            parsed=parse_json_content(content) if not cut else None, error=failed,
                            repeats=repeats, cut=cut or None)
        if self.engine_session is not None:
            try:
                self.engine_session.observe(result)
            except Exception as exc:  # noqa: BLE001 - untrusted text never breaks the agent's call
                log.warning("stretto: could not take in the result of %s (%s); serving stops for "
                            "this session", tool, exc)
                self.engine_session, self._stopped = None, True
        return result

    def _would(self, call_id: str, serve: bool) -> list[ShadowLookup]:
        """A shadow session's would-be lookups after this result (none where serving could not append)."""
        if not serve or self.engine_session is None:
            return []
        return self.engine_session.shadow_round(call_id)

    def _finish(self, result: ToolResult, made: list[Lookup], trig: Any = None,
                would: Sequence[ShadowLookup] = ()) -> str:
        # The result and the lookups are this call's own events, made for it (the engine keeps
        # none of them): they are completed in place, not copied (copies were a tenth of the
        # proxy's CPU per call outside the engine, `benchmarks/proxy_cpu.py --flow`).
        text = fenced_appendix([lookup for lookup in made if not lookup.abandoned], self.fence)
        result.appended = text or None
        if result.at is None:
            result.at = self._stamp()
        self._event(result)
        for shadowed in would:
            self._event(shadowed)
        for lookup in made:
            if lookup.at is None:
                lookup.at = self._stamp()
            self._event(lookup)  # written (encoded) now, with its parsed result
            # kept without its parsed result (the text stays): a session open for hours keeps its
            # lookups, and their parsed JSON was most of what it held (`benchmarks/serving_pauses.py`)
            lookup.parsed = None
            self.lookups.append(lookup)
            if not lookup.error:
                self._outstanding[_call_key(lookup.tool, lookup.arguments)] = lookup.call_id
        refusals = self.engine_session.take_refusals() if self.engine_session is not None else []
        for refusal in refusals:
            self._event(refusal.model_copy(update={"after_call_id": result.call_id}))
        if trig is not None and (made or refusals):
            self.spans.made(trig, made, refusals)
        return text

    def _seen(self, event: UserMessage | LLMTurn) -> None:
        """Record an event and show it to the engine (user words and model turns)."""
        self._event(event)
        if self.engine_session is not None:
            try:
                self.engine_session.observe(event)
            except Exception as exc:  # noqa: BLE001
                log.warning("stretto: could not take in an event (%s); serving stops for this session", exc)
                self.engine_session, self._stopped = None, True

    def _stamp(self) -> "datetime | None":
        """The time an event is recorded at, set as it is made when the recorder stamps events:
        the recorder then has no copy to make to stamp it (copies were a fifth of the CPU of taking
        in and recording a proxied call that makes no lookup, `benchmarks/proxy_cpu.py`)."""
        recorder = self.recorder
        return datetime.now(timezone.utc) if recorder is not None and recorder.stamp else None

    def _event(self, event: Any) -> None:
        if self.recorder is not None:
            hasher = self.owner.field_hasher
            self.recorder.record(event if hasher is None else hasher.event(event))


def _call_key(tool: str, arguments: dict[str, Any]) -> Hashable:
    """A canonical key of a call; arguments too deep or odd to dump get a key of their own, so
    they can never match a lookup (and never raise into the agent's call). Arguments of text and
    whole numbers alone (most calls') are keyed by their sorted pairs, with no JSON written: the
    proxy keys every call and every lookup (`benchmarks/proxy_cpu.py --flow`)."""
    if isinstance(arguments, dict) and all(type(name) is str and (isinstance(value, str) or type(value) is int)
                                           for name, value in arguments.items()):  # (never a bool: 1 is not true)
        return tool, tuple(sorted(arguments.items()))
    try:
        return tool + "\x00" + json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
    except (ValueError, TypeError, RecursionError):
        return tool + "\x00" + uuid.uuid4().hex
