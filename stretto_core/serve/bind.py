"""Binding a lookup's arguments at decision time: pure, and quick enough to run per tool result.

    bind(table, tool, state, site) -> Binding | None

A bare lookup binds to no arguments, once per session (not if the tool was called or looked up
already). A bound lookup takes its lead argument first: at the first source of its order (the
site's own order when the site has one) that has a candidate, the free pick (`bindings_pick`).
Each other argument takes, at the first source with a candidate, the value in the lead's record
when its path lies under the lead's list, else its own free pick; a list argument takes every
value at its source's path unless the tool already had that list; a constant is passed as it
is; a derived argument takes its template's pick (`bindings_derived`). No value for some argument, or a call already made since the last write or in flight: None.

ρ is the product over arguments of each one's ρ for its pick's class times the argument's factor
at the site (`bindings_compile`), the lead's times the lift of its source for whether the user
named the pick (`bindings_named`, at most 1); the binding's `mention` is the lead's class.

Speed: the table is turned once into a plan per tool (sources split, orders per site resolved),
and every view of a result the picks need (normalized values, mention flags, record words) is
cached on the result itself, so a bind reads a handful of dictionaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stretto_core.learn.bindings.compile import DEFAULT_ORDER
from stretto_core.learn.bindings.derived import Pools, Template, derived_pick, parse_template
from stretto_core.learn.bindings.model import NAMED_OTHER, PLAIN, Binding, BindingTable, LookupTable, split_source
from stretto_core.learn.bindings.named import OTHER, identified_elsewhere, served_lift
from stretto_core.learn.bindings.pick import free_pick, pool_of
from stretto_core.learn.bindings.records import element_of_pick, list_candidates, list_key, value_in_element
from stretto_core.sessions.state import ResultEntry, ToolState

CONSTANT_SOURCE = "constant"
"""What `Binding.sources` says for an argument passed as a constant."""


@dataclass
class _ArgPlan:
    name: str
    mode: str
    constant: Any
    orders: dict[str, list[tuple[str, str, str]]]
    rho: dict[str, dict[str, float]]
    site_factor: dict[str, float]
    class_lift: dict[str, dict[str, float]]
    template: Template | None = None
    template_key: str = ""


@dataclass
class _Plan:
    kind: str
    bare_rho: float
    args: list[_ArgPlan]


def bind(table: BindingTable, tool: str, state: ToolState, site: str, align: bool = True) -> Binding | None:
    """The lookup of `tool` bound from the state at `site`, or None when it cannot be made.

    `align=False` takes every argument on its own, never from the lead argument's record.
    """
    plans = _plans_of(table)
    plan = plans.get(tool)
    if plan is None:
        lookup = table.lookups.get(tool)
        if lookup is None:
            return None
        plan = plans[tool] = _plan(lookup)
    if plan.kind == "unbound":
        return None
    if plan.kind == "bare":
        if state.calls_by_tool.get(tool):
            return None
        return Binding({}, plan.bare_rho, [], PLAIN, tool)
    arguments: dict[str, Any] = {}
    sources: list[str] = []
    rho = 1.0
    mention = PLAIN
    anchor: tuple[ResultEntry, str, tuple[int, ...]] | None = None
    for i, arg in enumerate(plan.args):
        if arg.mode == "constant":
            arguments[arg.name] = arg.constant
            sources.append(CONSTANT_SOURCE)
            rho *= arg.rho[DEFAULT_ORDER][PLAIN]
            continue
        if arg.mode == "derived":
            assert arg.template is not None
            value = derived_pick(arg.template, Pools(state), state.passed_values(tool, arg.name))
            if value is None:
                return None
            arguments[arg.name] = value
            sources.append(arg.template_key)
            rho *= arg.rho[DEFAULT_ORDER][PLAIN]
            continue
        key = site if site in arg.orders else DEFAULT_ORDER
        got = (_pick_list(state, tool, arg, key) if arg.mode == "list"
               else _pick_value(state, tool, arg, key, anchor if align else None, i == 0))
        if got is None:
            return None
        value, src, cls, rho_table, new_anchor = got
        arguments[arg.name] = value
        sources.append(src)
        rho *= rho_table[cls] * arg.site_factor.get(site, 1.0)
        if i == 0:
            mention, anchor = cls, new_anchor
            lifts = arg.class_lift.get(src)
            if lifts:
                beside_id = cls == NAMED_OTHER and OTHER in lifts and _identified_elsewhere(state, src)
                rho *= served_lift(lifts, cls, beside_id, table.stretto_bindings)
    if state.already_made(tool, arguments):
        return None
    return Binding(arguments, rho, sources, mention, tool)


def _plans_of(table: BindingTable) -> dict[str, Any]:
    """The table's plans per tool, read from pydantic's store of private attributes: `table._plans`
    goes through pydantic's attribute fallback, about 9 µs a read (a decision binds one or two)."""
    private = table.__pydantic_private__
    plans = private.get("_plans") if private is not None else None
    return plans if plans is not None else table._plans


def _pick_value(state: ToolState, tool: str, arg: _ArgPlan, key: str,
                anchor: tuple[ResultEntry, str, tuple[int, ...]] | None, lead: bool):
    for source_tool, path, src in arg.orders[key]:
        pool = pool_of(state, source_tool)
        if not pool:
            continue
        pick = None
        if anchor is not None and anchor[0].tool == source_tool and path in anchor[0].index.by_path:
            pick = value_in_element(state, tool, arg.name, pool, anchor[0], path, anchor[1], anchor[2])
        if pick is None:
            pick = free_pick(state, tool, arg.name, pool, path)
        if pick is None:
            continue
        new_anchor = None
        if lead:
            where = element_of_pick(path, pick)
            if where is not None:
                new_anchor = (pick.entry, where[0], where[1])
        # Non-lead arguments were scored under "aligned where possible, else free" (bindings_learn).
        rho_table = arg.rho[key] if lead else arg.rho.get("aligned:" + key, arg.rho[key])
        return pick.value, src, pick.mention, rho_table, new_anchor
    return None


def _identified_elsewhere(state: ToolState, src: str) -> bool:
    source_tool, path = split_source(src)
    return identified_elsewhere(state, pool_of(state, source_tool), path)


def _pick_list(state: ToolState, tool: str, arg: _ArgPlan, key: str):
    passed = state.passed_lists.get(tool) or ()
    for source_tool, path, src in arg.orders[key]:
        entry = next((e for e in pool_of(state, source_tool) if path in e.index.by_path), None)
        if entry is None:
            continue
        values, keys = list_candidates(entry, path)
        if not keys or (arg.name, list_key(keys)) in passed:
            continue
        return list(values), src, PLAIN, arg.rho[key], None
    return None


def _plan(lookup: LookupTable) -> _Plan:
    if lookup.kind != "bound":
        return _Plan(lookup.kind, lookup.bare_rho if lookup.bare_rho is not None else 1.0, [])
    names = sorted(lookup.args, key=lambda a: (a != lookup.lead, lookup.args[a].mode == "constant", a))
    args = []
    for name in names:
        at = lookup.args[name]
        orders = {key: [(*split_source(s), s) for s in order]
                  for key, order in {DEFAULT_ORDER: at.sources, **at.site_orders}.items()}
        rho = dict(at.rho)
        rho.update({"aligned:" + k: v for k, v in at.rho_aligned.items()})
        template = parse_template(at.template) if at.mode == "derived" and at.template else None
        args.append(_ArgPlan(name, at.mode, at.constant, orders, rho, at.site_factor, at.class_lift, template,
                             at.template or ""))
    return _Plan("bound", 1.0, args)
