"""Learning bindings from one session: where the agent took each argument, and how a pick fared.

The session is walked in order with a `ToolState`. At each of the agent's read calls, with the
state as it stood just before the call (earlier calls of the same turn in flight, so counted as
made and their values as passed), and at the call's site:

    site        the tool, and whether it failed, of the newest tool result before the call
                (the agent's or a lookup's), or `start`; a call after another call of the same
                turn is at the site of that call
    provenance  each string or number value: the newest visible successful result holding it
                at a source path, at its first such path in document order -> source (tool, path)
                count found[source] and site_found[site][source]; values counts every value
    lists       a list value: the newest result with one source path holding every element
    evidence    for every source path of the newest result of every tool, the pick a binding
                would make there (`bindings_pick`), its class c, and whether it equals the
                agent's value:  n_has[c, source] += w,  n_eq[c, source] += w·[pick = value]
                Free picks always; aligned picks (to the call's other arguments) when the call
                passes several string or number arguments. List picks: equal as sets.
    constants   the one value seen (or `varied`), calls whose value an earlier result held,
                and whether a value was a string with a digit or an `@` the user wrote

All of it is counted for every argument, required or not: which arguments are required is a
property of the merged counts (`bindings_compile`), not of one session.

The evidence is the bulk of the work (every source, at every value); `bindings_sources` counts
it in bulk, to the same counts.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

from stretto_core.learn.bindings.model import (ALIGNED, DEFAULT_OPTIONS, FREE, START_SITE, ArgCounts, BindingCounts,
                                         BindingOptions, LookupCounts, site_name, source_key)
from stretto_core.learn.bindings.derived_learn import DerivedLearner
from stretto_core.learn.bindings.lift_decisions import decisions_counted
from stretto_core.learn.bindings.named import count_decision, flush_named
from stretto_core.learn.bindings.pick import eligible_path, pool_of
from stretto_core.learn.bindings.records import list_candidates, list_key
from stretto_core.learn.bindings.sources import count_value, flush_sources, source_paths
from stretto_core.learn.reads_ahead import reads_before_write
from stretto_core.sessions.manifest import ToolManifest
from stretto_core.sessions.model import LLMTurn, Lookup, Session, ToolCall, ToolResult, UserMessage
from stretto_core.sessions.state import ResultEntry, ToolState
from stretto_core.sessions.user_words import USER_TOOL
from stretto_core.sessions.values import argument_leaves, is_scalar, normalize


def count_session(session: Session, manifest: ToolManifest,
                  options: BindingOptions = DEFAULT_OPTIONS) -> BindingCounts:
    """One session's binding counts, at weight 1."""
    counts = BindingCounts(sessions=1.0)
    count_session_into(counts, session, manifest, options)
    return counts


def count_session_into(counts: BindingCounts, session: Session, manifest: ToolManifest,
                       options: BindingOptions = DEFAULT_OPTIONS) -> None:
    """Add one session's binding counts, at weight 1, to `counts` (all but `sessions`).

    Every count is a sum of whole numbers, so counting straight into running totals gives the
    same floats as adding the session's own counts to them.
    """
    state = ToolState(manifest, look_back=options.look_back, user_source=options.user_words)
    outcome = {e.call_id: e.error for e in session.events if isinstance(e, ToolResult)}
    users_calls: set[str] = set()
    user_calls = {c.call_id for e in session.events if isinstance(e, UserMessage) for c in e.calls}
    later = reads_before_write(session, manifest, user_calls)
    lifted = decisions_counted(session, manifest, options.class_lift, user_calls)
    site = START_SITE
    derived = DerivedLearner()
    for event in session.events:
        if isinstance(event, UserMessage):
            users_calls.update(state.observe_user_message(event))
        elif isinstance(event, LLMTurn):
            at = site
            for call in event.calls:
                if manifest.is_read(call.tool):
                    _count_call(counts.lookup(call.tool), state, call, at, derived)
                state.observe_call(call.call_id, call.tool, call.arguments)
                at = site_name(call.tool, outcome.get(call.call_id, True))
        elif isinstance(event, ToolResult):
            if event.call_id in users_calls:
                state.observe_result(event.call_id, event.tool, event.content, event.parsed, event.error,
                                     by_agent=False)
            else:
                state.observe_result(event.call_id, event.tool, event.content, event.parsed, event.error)
                site = site_name(event.tool, event.error)
                if lifted is None:
                    count_decision(counts.named, state, later.get(event.call_id, ()))
                elif event.call_id in lifted:
                    count_decision(counts.named, state, later.get(event.call_id, ()), lifted[event.call_id])
        elif isinstance(event, Lookup):
            state.observe_lookup(event.call_id, event.tool, event.arguments, event.content, event.parsed,
                                 event.error)
            site = site_name(event.tool, event.error)
    flush_sources(state)
    flush_named(state)
    derived.finish(state, counts.lookups)


def _count_call(lookup: LookupCounts, state: ToolState, call: ToolCall, site: str,
                derived: DerivedLearner | None = None) -> None:
    args = {k: v for k, v in call.arguments.items() if v is not None}
    lookup.calls += 1.0
    if not args:
        lookup.bare_calls += 1.0
    scalars = {k: normalize(v) for k, v in args.items() if is_scalar(v)}
    for name, value in args.items():
        counts = lookup.arg(name)
        counts.calls += 1.0
        _see_constant(counts, state, value)
        if isinstance(value, (list, tuple)):
            counts.list_calls += 1.0
            _trace_list(counts, state, value, site)
            _evidence_list(counts, state, call.tool, name, value)
        elif is_scalar(value):
            key = scalars[name]
            if key is None:
                continue
            traced = _trace_value(counts, state, key, site, value if state.user_source else None)
            if derived is not None and type(value) is str:
                derived.see(state, call.tool, name, value, traced)
            anchors = [k for n, k in scalars.items() if n != name and k is not None]
            _evidence_value(counts, state, call.tool, name, key, anchors)


def _visible_newest_first(state: ToolState):
    for entry in reversed(state.results):
        if entry.ok and entry.visible:
            yield entry


def _trace_value(counts: ArgCounts, state: ToolState, key: str, site: str, raw: Any = None) -> bool:
    """Count the value's provenance; whether some result held it whole."""
    counts.values += 1.0
    for entry in _visible_newest_first(state):
        for path in entry.index.paths.get(key, ()):
            if eligible_path(path) and (raw is None or entry.tool != USER_TOOL or raw in entry.index.by_path[path]):
                # the user's words hold each value as written and capitalized: the one the agent passed
                _found(counts.found, counts.site_found, site, source_key(entry.tool, path))
                return True
    return False


def _trace_list(counts: ArgCounts, state: ToolState, value: list[Any] | tuple[Any, ...], site: str) -> None:
    keys = [k for k in (normalize(v) for v in value) if k is not None]
    if not keys:
        return
    counts.lists += 1.0
    for entry in _visible_newest_first(state):
        common = _common_paths(entry, keys)
        if common:
            _found(counts.list_found, counts.list_site_found, site, source_key(entry.tool, common[0]))
            return


def _common_paths(entry: ResultEntry, keys: list[str]) -> list[str]:
    """Source paths of this result holding every key, in the document order of the first key."""
    first = entry.index.paths.get(keys[0])
    if not first:
        return []
    common = [p for p in first if eligible_path(p)]
    for key in keys[1:]:
        if not common:
            break
        held = entry.index.paths.get(key)
        if not held:
            return []
        common = [p for p in common if p in held]
    return common


def _found(found: dict[str, float], site_found: dict[str, dict[str, float]], site: str, src: str) -> None:
    found[src] = found.get(src, 0.0) + 1.0
    per_site = site_found.setdefault(site, {})
    per_site[src] = per_site.get(src, 0.0) + 1.0


def _evidence_value(counts: ArgCounts, state: ToolState, tool: str, arg: str, key: str,
                    anchors: list[str]) -> None:
    counts.evidence.setdefault(FREE, {})
    counts.evaluated[FREE] = counts.evaluated.get(FREE, 0.0) + 1.0
    if anchors:
        counts.evidence.setdefault(ALIGNED, {})
        counts.evaluated[ALIGNED] = counts.evaluated.get(ALIGNED, 0.0) + 1.0
    count_value(state, counts, tool, arg, key, anchors)


def _evidence_list(counts: ArgCounts, state: ToolState, tool: str, arg: str,
                   value: list[Any] | tuple[Any, ...]) -> None:
    keys = frozenset(k for k in (normalize(v) for v in value) if k is not None)
    if not keys:
        return
    counts.list_evaluated += 1.0
    passed = state.passed_lists.get(tool) or ()
    for source_tool in state.ok_results:
        pool = pool_of(state, source_tool)
        for path in source_paths(pool):
            entry = next(e for e in pool if path in e.index.by_path)
            _values, pick = list_candidates(entry, path)
            if not pick or (arg, list_key(pick)) in passed:
                continue
            cell = counts.list_evidence.setdefault(source_key(source_tool, path), [0.0, 0.0])
            cell[0] += 1.0
            if pick == keys:
                cell[1] += 1.0


def _see_constant(counts: ArgCounts, state: ToolState, value: Any) -> None:
    # a string's JSON is what `json.dumps` makes of it, without the encoder's set-up
    counts.see_constant(encode_basestring_ascii(value) if type(value) is str
                        else json.dumps(value, sort_keys=True, default=str, separators=(",", ":")))
    leaves = argument_leaves({"": value})
    keys = [normalize(v) for v in leaves]
    if any(k is not None and k in state.seen_values for k in keys):
        counts.found_in_result += 1.0
    for leaf, key in zip(leaves, keys):
        if isinstance(leaf, str) and key is not None and (any(c.isdigit() for c in leaf) or "@" in leaf) \
                and state.mentioned_key(key):
            counts.user_wrote = True
