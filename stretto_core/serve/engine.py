"""The in-process engine the adapters, the proxy and the replay call.

It keeps one session's tool state and abstract history, and after each tool result says which
lookups to make; given their results, it says what text to append to the agent's result. The
decision itself is pure: the engine never calls a tool; the caller makes each lookup (through
the SDK, the MCP server, the environment, or the record) and hands the result back.

Typical use, after the agent's call `call_id` returned:

    session.observe(tool_result_event)
    lookups = session.run_lookups(call_id, call_tool)   # call_tool(tool, args) -> any tool output
    text = session.appendix(lookups)                     # append to the agent's result

A session makes lookups only with an authority on tool kinds besides the flow (a live manifest,
see `Engine`), and never raises into its caller.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from stretto_core.errors import snippet

from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import (Event, LLMTurn, Lookup, Refusal, RefusalReason, ShadowLookup, ToolResult,
                                        UserMessage, parse_json_content)
from stretto_core.serve.modes import model_for_mode
from stretto_core.serve.option_values import check_choice, check_count, check_fraction, check_names
from stretto_core.serve.speculator import (DEFAULT_THETA, MAX_LOOKUPS_PER_CALL, MAX_LOOKUPS_PER_SESSION, POLICIES,
                                     Decision, FlowModel, Guard, decide)
from stretto_core.learn.bindings.model import DEFAULT_OPTIONS, START_SITE, site_name
from stretto_core.sessions.state import ToolState, grown
from stretto_core.serve.arguments import argument_refusal
from stretto_core.serve.results import fenced_appendix, new_fence
from stretto_core.serve.workers import Cooldowns

if TYPE_CHECKING:
    from stretto_core.serve.lookups import Limits

log = logging.getLogger("stretto")

APPENDIX_HEADER = "--- Also looked up automatically (current results; no need to repeat these calls) ---"

CallTool = Callable[[str, dict[str, Any]], Any]

_NONE: frozenset[str] = frozenset()
"""The empty set a session's sets start as (`state.grown` gives each its own at its first value)."""

KEPT_HISTORY = 16
"""A served session keeps at least this many newest steps of its history (the flow reads two)."""

KEPT_TIMINGS = 1024
"""A served session keeps at least this many newest decision times."""


MAX_ARGUMENT_REFUSALS = 4
"""Reads refused for their arguments in one decision before it hands back (each is recorded)."""


class _Excluding:
    """A guard that also refuses some tools (those whose bound arguments were refused)."""

    def __init__(self, guard: Any, tools: set[str]) -> None:
        self._guard = guard
        self._tools = frozenset(tools)

    def permits(self, tool: str) -> bool:
        return tool not in self._tools and self._guard.permits(tool)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._guard, name)


def site_of(tool: str, error: bool) -> str:
    """The decision point after a tool result: the tool, marked when it failed."""
    return site_name(tool, error)


@dataclass
class EngineConfig:
    """How a flow is served: threshold, policy, budgets and guards."""

    theta: float = DEFAULT_THETA
    policy: str = "use"
    per_call: int = MAX_LOOKUPS_PER_CALL
    per_session: int = MAX_LOOKUPS_PER_SESSION
    live_manifest: ToolManifest | None = None
    allow: frozenset[str] | None = None
    shadow: bool = False
    served: bool = True
    """Sessions keep only what a decision can use (a bounded state, `ToolState`); replay sets
    False to keep every result it asks about."""
    name_on_message: bool = False
    """A served session derives which held values the user named when the user speaks, not at
    the decision after the agent's next result (`pick.rename_held`; the same decisions). It
    takes that work off a tool call's path (τ² test: decide p99 -12 to -20%, observe + decide
    p99 -5 to -8%) for about 3% more CPU in all and 2-7% more memory per served session (the
    naming of the last messages, which no decision reads), so it is off unless asked."""

    def __post_init__(self) -> None:
        """The same checks, and messages, as `StrettoOptions` (a NaN threshold never serves)."""
        self.theta = check_fraction("theta", self.theta)
        self.policy = check_choice("policy", self.policy, POLICIES)
        self.per_call = check_count("per_call", self.per_call)
        self.per_session = check_count("per_session", self.per_session)
        if self.allow is not None:
            self.allow = frozenset(check_names("allow", self.allow))


NO_AUTHORITY = ("stretto: an engine session has no authority on tool kinds (a live manifest: the "
                "server's listing, the SDK's annotations, or a manifest the operator passes), so it makes "
                "no lookup; the flow file alone never decides which tools are reads")


class Engine:
    """A served flow; `session()` starts the state of one agent session.

    Lookups need an authority on tool kinds besides the flow: `EngineConfig.live_manifest` for
    every session, or a `live_manifest` per session. A session with neither makes no lookup,
    and the engine says so once.
    """

    def __init__(self, model: FlowModel, config: EngineConfig | None = None) -> None:
        self.model = model
        self.config = config or EngineConfig()
        self.guard = Guard(model.manifest, self.config.live_manifest, self.config.allow)
        self.cooldowns = Cooldowns()
        """Tools whose lookups timed out, not looked up by any session for a while (`serve/workers.py`)."""
        self._warned = False
        self._by_mode: dict[bool, FlowModel] = {}
        self._last_guard: tuple[ToolManifest, Guard] | None = None
        """The guard made for the latest live manifest, and that manifest (the same object again:
        the same guard, its verdicts cached once, not one guard and table per session)."""

    def session(self, live_manifest: ToolManifest | None = None, *, served: bool | None = None,
                solo: bool = False) -> "EngineSession":
        """A new session's state; `live_manifest` is the tools this session's server lists, when
        known per session (it narrows the engine's guard: a tool it does not mark read is never
        looked up, nor one whose contract changed).

        `served`: keep only what a decision can use, so the session's memory is bounded
        (`ToolState`); None: as the config says (`EngineConfig.served`; replay's is False).
        `solo`: no user speaks in this session; the flow serves each mode by its own sessions
        (`model_for`).
        """
        return EngineSession(self, self.guard if live_manifest is None else self.guard_for(live_manifest),
                             served=self.config.served if served is None else served, solo=solo)

    def model_for(self, solo: bool) -> FlowModel:
        """The model a session of this mode decides with: the flow's, with its reach shrunk towards
        the habit where the flow learned too few sessions of the mode (`serve/modes.py`)."""
        key = bool(solo)
        if key not in self._by_mode:
            self._by_mode[key] = model_for_mode(self.model, key)
        return self._by_mode[key]

    def guard_for(self, live_manifest: ToolManifest) -> Guard:
        """The guard of a session whose server lists `live_manifest`, narrowed by the config's: a
        tool the session's server does not list is never looked up, whatever the config says."""
        last = self._last_guard
        if last is not None and last[0] is live_manifest:  # sessions of one server share its listing
            return last[1]
        live = live_manifest if self.config.live_manifest is None else live_manifest.narrowed(self.config.live_manifest)
        guard = Guard(self.model.manifest, live, self.config.allow)
        self._last_guard = (live_manifest, guard)
        return guard

    def warn_no_authority(self) -> None:
        """Say once that sessions without an authority make no lookup."""
        if not self._warned:
            self._warned = True
            log.warning(NO_AUTHORITY)


@dataclass
class EngineSession:
    """One agent session as the engine sees it: tool state, abstract history, budgets."""

    engine: Engine
    guard: Guard
    state: ToolState = field(init=False)
    history: list[str] = field(default_factory=list)
    site: str = START_SITE
    lookups_this_call: int = 0
    lookups_total: int = 0
    chain: set[str] | frozenset[str] = _NONE
    """The tools looked up since the agent's latest result (this decision's chain, `keep` order)."""
    _counter: int = 0
    _pending_reply: bool = False
    user_call_ids: set[str] | frozenset[str] = _NONE
    """Call ids of the user's own calls whose results are still to come (this session's sets start
    as one shared empty frozenset and get their own at their first value, `state.grown`)."""
    decide_seconds: array = field(default_factory=lambda: array("d"))
    """Seconds each decision took (a served session: the newest `KEPT_TIMINGS`), as machine
    floats (8 bytes each, not a float object's 24 and a list's pointer)."""
    fence: str = field(default_factory=new_fence)
    """This session's delimiter of appended lookups (`serve.results.fenced_appendix`)."""
    broken: bool = False
    """True once an event broke the state: the session then makes no lookup."""
    served: bool = True
    """Keep only what a decision can use: a bounded state, the history's newest steps."""
    note_refusals: bool = False
    """Note each lookup the flow chose that a budget or a time limit cut (`refusals`), for a
    recorded session to say so; replay leaves it off (it counts, and records nothing)."""
    refusals: list[Refusal] = field(default_factory=list)
    """Refusals noted since the last `take_refusals`."""
    solo: bool = False
    """No user speaks in this session (the agent operates the phone itself)."""
    refusals_of_arguments: int = 0
    """Lookups the flow chose whose bound arguments did not fit the tool's contract (not made)."""
    argument_refused: set[str] | frozenset[str] = _NONE
    """Reads refused for their arguments since the agent's latest result (not chosen again till the next)."""
    model: FlowModel = field(init=False)
    """What this session decides with: the engine's model for the session's mode."""
    _cooling_noted: set[str] | frozenset[str] = _NONE
    """Tools cooling down whose `cooldown` refusal this session recorded already."""

    def __post_init__(self) -> None:
        self.model = self.engine.model_for(self.solo)
        model = self.engine.model
        look_back = getattr(model, "look_back", DEFAULT_OPTIONS.look_back)
        self.state = ToolState(model.manifest, look_back=look_back, served=self.served,
                               focus=getattr(model, "focus", None) if self.served else None,
                               user_source=getattr(model, "user_words", None),
                               keep_text=getattr(model, "text_tools", frozenset()) if self.served else None,
                               watched_words=getattr(model, "intent_words", frozenset()))

    # -- what happened -----------------------------------------------------------------
    def observe(self, event: Event) -> None:
        """Take in one event of the session, in order. Never raises: an event whose content
        breaks the state (it should not: results are read within bounds, `sessions/values.py`)
        stops this session's lookups and is logged."""
        if self.broken:
            return
        try:
            self._observe(event)
        except Exception as exc:  # noqa: BLE001 - untrusted content never breaks the agent's call
            self._break(f"could not take in a {getattr(event, 'kind', 'strange')} event "
                        f"({type(exc).__name__}: {exc})")

    def _observe(self, event: Event) -> None:
        model = self.engine.model
        if isinstance(event, UserMessage):
            ids = self.state.observe_user_message(event)
            if ids:
                self.user_call_ids = grown(self.user_call_ids)
                self.user_call_ids.update(ids)
            self._close_reply(answered=True)
            if self.served and not self.broken:
                self._forget_stale()
                if self.engine.config.name_on_message:
                    self._name_held()
        elif isinstance(event, LLMTurn):
            self._close_reply(answered=False)
            if not event.calls:
                self._pending_reply = True
            for call in event.calls:
                self.state.observe_call(call.call_id, call.tool, call.arguments, by_agent=True)
        elif isinstance(event, ToolResult):
            by_agent = event.call_id not in self.user_call_ids
            self.state.observe_result(event.call_id, event.tool, event.content, event.parsed,
                                      event.error, by_agent=by_agent)
            if by_agent:
                self._step(model.step_symbol(event.tool, event.error, event.content, event.parsed))
                self.site = site_of(event.tool, event.error)
                self.lookups_this_call = 0
                self.chain = self.argument_refused = _NONE
            elif self.served:
                self.user_call_ids.discard(event.call_id)
        elif isinstance(event, Lookup):
            self._absorb_lookup(event.tool, event.arguments, event.content, event.parsed, event.error,
                                event.call_id)

    def _forget_stale(self) -> None:
        """The user spoke: a served session drops the namings of their earlier words now, not
        when each is next read (`serve/stale.py`; the same decisions, less memory held)."""
        forget = getattr(self.model, "forget_stale", None)
        if forget is not None:
            forget(self.state)

    def _name_held(self) -> None:
        """The user spoke: which held values they named is derived now, once, while the agent
        thinks, not at the decision after its next result (the same naming either way)."""
        name = getattr(self.model, "name_held", None)
        if name is not None:
            name(self.state)

    def _close_reply(self, answered: bool) -> None:
        """A reply is a step once we know whether the user answered it (steps.py's rule)."""
        if self._pending_reply:
            self._step(self.engine.model.reply_symbol(answered=answered))
            self._pending_reply = False

    def _step(self, symbol: str) -> None:
        """One more step of the abstract history (a served session keeps the newest
        `KEPT_HISTORY`: the flow's contexts read the last two)."""
        self.history.append(sys.intern(symbol))  # one string per step kind in the process, not one per step
        if self.served and len(self.history) > 2 * KEPT_HISTORY:
            del self.history[:-KEPT_HISTORY]

    # -- what to do ----------------------------------------------------------------------
    @property
    def has_authority(self) -> bool:
        """Whether an authority on tool kinds was given; without one no lookup is ever made."""
        return self.guard.live_manifest is not None

    def decide(self) -> Decision | None:
        """The next lookup to make after the latest tool result, or None (budgets included)."""
        cfg = self.engine.config
        if self.broken:
            return None
        if self.lookups_this_call >= cfg.per_call:
            self.note_cut("call_limit", f"the limit of {cfg.per_call} lookups after one call was reached")
            return None
        if self.lookups_total >= cfg.per_session:
            self.note_cut("session_limit", f"the limit of {cfg.per_session} lookups in a session was reached")
            return None
        if not self.has_authority:
            self.engine.warn_no_authority()
            return None
        started = time.perf_counter()
        cooled: Any = self._cooled_guard()
        guard: Any = _Excluding(cooled, self.argument_refused) if self.argument_refused else cooled
        decision = None
        for _ in range(MAX_ARGUMENT_REFUSALS + 1):
            decision = decide(self.model, guard, self.state, self.history, self.site,
                              cfg.theta, cfg.policy, self.chain)
            if decision is None or not self.guard.permits(decision.tool):
                decision = None  # defence in depth: the speculator filters by the guard already
                break
            why = self._argument_refusal(decision)
            if why is None:
                break
            self.refusals_of_arguments += 1
            self.note_refusal(Refusal(tool=decision.tool, reason="argument_refused", detail=why))
            self.argument_refused = grown(self.argument_refused)
            self.argument_refused.add(decision.tool)  # not again until the agent's next result
            guard = _Excluding(cooled, self.argument_refused)  # the next best read, if one clears θ
            decision = None
        self.decide_seconds.append(time.perf_counter() - started)
        if self.served and len(self.decide_seconds) > 2 * KEPT_TIMINGS:
            del self.decide_seconds[:-KEPT_TIMINGS]
        return decision

    def _argument_refusal(self, decision: Decision) -> str | None:
        """Why the decision's bound arguments do not fit the tool's contract (`serve/arguments.py`)."""
        live_manifest = self.guard.live_manifest
        live = live_manifest.tools[decision.tool].contract if (
            live_manifest is not None and decision.tool in live_manifest.tools) else None
        flow = getattr(self.engine.model, "flow", None)
        pinned = getattr(flow, "pinned", {}).get(decision.tool) if flow is not None else None
        contracts = getattr(flow, "contracts", None)
        shapes = contracts.shapes.get(decision.tool) if contracts is not None else None
        return argument_refusal(decision.arguments, live, pinned, shapes)

    def _cooled_guard(self) -> Any:
        """The guard, less the tools cooling down after a lookup timed out; the first time this
        session would have looked one up, a `cooldown` refusal says so."""
        cooling = self.engine.cooldowns.cooling()
        if not cooling:
            return self.guard
        cfg = self.engine.config
        if self.note_refusals and not cooling <= self._cooling_noted:
            wanted = decide(self.model, self.guard, self.state, self.history, self.site, cfg.theta, cfg.policy,
                            self.chain)
            if wanted is not None and wanted.tool in cooling and wanted.tool not in self._cooling_noted:
                self._cooling_noted = grown(self._cooling_noted)
                self._cooling_noted.add(wanted.tool)
                left = self.engine.cooldowns.left(wanted.tool)
                self.refusals.append(Refusal(tool=wanted.tool, reason="cooldown", detail=(
                    f"a lookup of {wanted.tool} timed out: no lookup of it for {left:.0f} s more")))
        return _CoolingGuard(self.guard, cooling)

    def cool_down(self, tool: str) -> None:
        """A lookup of `tool` timed out: no session of this engine looks it up for a while."""
        seconds = self.engine.cooldowns.timed_out(tool)
        self._cooling_noted = grown(self._cooling_noted)
        self._cooling_noted.add(tool)
        self.note_refusal(Refusal(tool=tool, reason="cooldown", detail=(
            f"a lookup of {tool} timed out: no lookup of it for {seconds:.0f} s")))

    def note_cut(self, reason: RefusalReason, detail: str) -> None:
        """A budget stops the lookups here: note the one the flow would have made next, if any."""
        if not self.note_refusals or not self.has_authority:
            return
        cfg = self.engine.config
        decision = decide(self.model, self.guard, self.state, self.history, self.site, cfg.theta, cfg.policy,
                          self.chain)
        if decision is not None and self.guard.permits(decision.tool):
            self.refusals.append(Refusal(tool=decision.tool, reason=reason, detail=detail))

    def note_refusal(self, refusal: Refusal) -> None:
        if self.note_refusals:
            self.refusals.append(refusal)

    def take_refusals(self) -> list[Refusal]:
        """The refusals noted since the last call, handed out once."""
        taken, self.refusals = self.refusals, []
        return taken

    def add_lookup(self, decision: Decision, content: str, error: bool,
                   after_call_id: str | None = None) -> Lookup:
        """Record a lookup's result: it joins the tool state and the history, as the agent's would."""
        self._counter += 1
        call_id = f"stretto-{self._counter}"
        parsed = parse_json_content(content)
        self._absorb_lookup(decision.tool, decision.arguments, content, parsed, error, call_id)
        self.lookups_this_call += 1
        self.lookups_total += 1
        return Lookup(call_id=call_id, tool=decision.tool, arguments=decision.arguments, content=content,
                      parsed=parsed, error=error, after_call_id=after_call_id, site=decision.site,
                      score=round(decision.score, 6), reach=round(decision.reach, 6),
                      binding=round(decision.binding, 6), policy=decision.policy)

    def shadow_round(self, after_call_id: str | None = None) -> list[ShadowLookup]:
        """The lookups serving would make now, decided as when serving and made by no one.

        Each one is conditioned on those before it as if made (taken as succeeding, as the `keep`
        order's look-ahead takes them): it joins the history, the site and the chain, and counts
        against the budgets; its call is held in flight so it is not chosen twice. Its result is
        unknown, so a later lookup binds only from what the session held. Afterwards the history,
        site, chain and calls in flight are the agent's alone again, for the agent makes its own
        calls (nothing was appended). Never raises."""
        if self.broken:
            return []
        saved = (list(self.history), self.site, set(self.chain))
        held: list[str] = []
        would: list[ShadowLookup] = []
        try:
            while (decision := self.decide()) is not None:
                call_id = f"stretto-shadow-{len(held)}"
                held.append(call_id)
                self.state.in_flight[call_id] = (decision.tool, dict(decision.arguments))
                self._step(self.engine.model.step_symbol(decision.tool, False, "", None))
                self.site = site_of(decision.tool, False)
                self.chain = grown(self.chain)
                self.chain.add(decision.tool)
                self.lookups_this_call += 1
                self.lookups_total += 1
                would.append(ShadowLookup(tool=decision.tool, arguments=dict(decision.arguments),
                                          after_call_id=after_call_id, site=decision.site,
                                          score=round(decision.score, 6), reach=round(decision.reach, 6),
                                          binding=round(decision.binding, 6), sources=list(decision.sources),
                                          policy=decision.policy))
        except Exception as exc:  # noqa: BLE001 - a trial never breaks the agent's call
            self._break(f"shadow decisions failed ({type(exc).__name__}: {exc})")
        finally:
            for call_id in held:
                self.state.in_flight.pop(call_id, None)
            self.history[:], self.site, self.chain = saved[0], saved[1], saved[2]
        return would

    def _absorb_lookup(self, tool: str, arguments: dict[str, Any], content: str, parsed: Any,
                       error: bool, call_id: str) -> None:
        self.state.observe_call(call_id, tool, arguments, by_agent=True)
        self.state.observe_result(call_id, tool, content, parsed, error, by_agent=True, arguments=arguments)
        self._step(self.engine.model.step_symbol(tool, error, content, parsed))
        self.site = site_of(tool, error)  # the agent would have made this read itself
        self.chain = grown(self.chain)
        self.chain.add(tool)

    def run_lookups(self, after_call_id: str | None, call_tool: CallTool,
                    limits: Limits | None = None) -> list[Lookup]:
        """Decide, make and absorb lookups one at a time (Algorithm 1) until the flow hands back.

        `call_tool(tool, args)` may return anything a tool does (text, a dict, bytes, None, MCP
        content blocks, a `(text, is_error)` pair); each lookup runs in a worker thread within
        `limits` (`serve.lookups.Limits`), and one that raises, hangs or returns garbage is
        recorded as failed. Nothing it does raises into the caller.
        """
        from stretto_core.serve.lookups import Limits as _Limits, run_lookups_sync

        try:
            return run_lookups_sync(self, after_call_id, call_tool, limits or _Limits())
        except Exception as exc:  # noqa: BLE001 - the agent's own call goes on whatever happened
            self._break(f"lookups failed ({type(exc).__name__}: {exc})")
            return []

    def appendix(self, lookups: Sequence[Lookup]) -> str:
        """The text to append to the agent's result: the lookups inside this session's fence (a
        lookup stretto abandoned, past its time limit or raising, is recorded but never shown)."""
        return fenced_appendix([lk for lk in lookups if not lk.abandoned], self.fence)

    def _break(self, why: str) -> None:
        """Stop serving this session (it is still observed): its input broke something."""
        if not self.broken:
            self.broken = True
            log.warning("stretto: %s; this session makes no more lookups", snippet(why, 300))


def appendix(lookups: Sequence[Lookup]) -> str:
    """The text appended to the agent's result: each lookup's call and its result (unfenced; a
    served session's own `EngineSession.appendix` fences them)."""
    if not lookups:
        return ""
    parts = ["", APPENDIX_HEADER]
    for lk in lookups:
        args = json.dumps(lk.arguments, sort_keys=True, ensure_ascii=False, default=str)
        mark = " (error)" if lk.error else ""
        parts.append(f"\n{lk.tool} {args}{mark}:\n{lk.content}")
    return "\n".join(parts)


@dataclass(frozen=True)
class _CoolingGuard:
    """A session's guard that also refuses the tools cooling down (`Cooldowns`)."""

    guard: Guard
    cooling: frozenset[str]

    @property
    def live_manifest(self) -> ToolManifest | None:
        return self.guard.live_manifest

    def permits(self, tool: str) -> bool:
        return tool not in self.cooling and self.guard.permits(tool)

    def why_not(self, tool: str) -> str:
        return f"{tool} is cooling down after a lookup timed out" if tool in self.cooling else self.guard.why_not(tool)
