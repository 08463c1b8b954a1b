"""From merged counts to the served table: required arguments, source orders, ρ per class.

Required arguments: those passed in at least `REQUIRED_SHARE` (90%) of a read's calls. A read
with none is a bare lookup, made with no arguments once per session, with

    ρ = 1                              if every call passed no argument
    ρ = (bare + 1) / (calls + 2)       otherwise (near 0 for a search the agent always narrows)

An argument is a list argument when most calls passed a list. A source is usable when it was
found at least `MIN_SOURCE_FOUND` times and for at least `MIN_SOURCE_SHARE` of the values looked
for. The lookup's order: usable sources by count, most first (ties by name). A site with at
least `MIN_SITE_VALUES` traced values has its own order: the usable sources seen there, by their
count there. An argument without a usable source makes the lookup unbindable.

ρ of one argument under an order O = (S_1 … S_m), from the per-source evidence (n_has, n_eq)
per class c, counted at the agent's own calls (`bindings_learn`). The binding takes the first
source with a candidate. Treating "S_j has a candidate" as independent across sources, with
h_j = Σ_c n_has(c, S_j) / calls evaluated, the chance the binding reaches S_i is
w_i = Π_{j<i} (1 - h_j), and

    k_c = Σ_i w_i · n_eq(c, S_i)       n_c = Σ_i w_i · n_has(c, S_i)

which is exact when O has one source (w_1 = 1). Sources that are rarely present together, as
`find_user_id_by_email $` and `find_user_id_by_name_zip $`, make w_i an underestimate of how
often the binding reaches S_i: fewer effective picks, so more shrinkage, never a bias in k/n
from one source to another. Then, with a Beta prior of weight `CLASS_PRIOR_WEIGHT` (10) towards
the argument's rate pooled over classes,

    ρ̄ = (Σ_c k_c + 1) / (Σ_c n_c + 2)        ρ_c = (k_c + 10 ρ̄) / (n_c + 10).

The paper's weight is 2. A class is a small slice of an argument's picks (AgentDojo slack's
`read_channel_messages` saw 2 `named_other` picks in training, both wrong, so weight 2 halved
their ρ; the test agents used 20 of 21 such lookups), so a class's own rate counts for half
only once it has ten picks.

ρ at a site. A pick can agree only when the agent took its value from a source of the order,
and how often it did differs by site (after `list_all_product_types` retail's agents take a
product id from the listing, never from an order). So the argument's ρ at site s is scaled by

    f_s = share_s / share,   share_s = (found_s(O) + 2 share) / (found_s + 2),

where found_s counts the values traced at s (to any source), found_s(O) those traced to a source
of the site's order, and share = found(O) / found over every site: the site's own share shrunk
towards the overall one with a prior of weight 2 (the paper's shrinkage of a site's rate).
`site_factor` keeps f_s for the sites where it is below 1 by at least `MIN_SITE_FACTOR_CHANGE`,
and a bound pick scores ρ_c · f_s. Only the downward side is kept: raised at the sites where
every value came from the order, τ²-bench airline made 106 more detours for 9 more saved turns.

A lookup with several bound arguments picks one, the lead, on its own (free evidence) and the
others aligned to the lead's record where they can (aligned evidence), so

    ρ(call) = ρ_lead(c_lead) · Π_{a ≠ lead} ρ_a,aligned(c_a),

the chance the lead is the agent's, times each other's chance given a right lead. The lead is
the argument that maximizes that product at ρ̄. List arguments use list evidence (a pick agrees
when the sets are equal) and the class `plain`.

The lead's class lift (`bindings_named`): per source of its orders, how much more (or less)
often the agent called the tool at all where the user had named the pick, from the decisions
counted in `BindingCounts.named`.

Constants (opt-in, paper App. D): an argument is passed as a constant when every call that
passed it passed one value, in at least `MIN_CONSTANT_CALLS` calls and at least
`MIN_CONSTANT_SHARE` of the lookup's calls, no earlier result ever held it, and it was never a
string with a digit or an `@` that the user wrote. Its factor in ρ is the chance the agent
passes it, (calls passing it + 1) / (calls + 2).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from stretto_core.learn.bindings.model import (ALIGNED, BINDINGS_FORMAT_VERSION, CLASSES, DERIVED_FORMAT_VERSION,
                                         FREE, PLAIN, ArgCounts,
                                         ArgTable, BindingCounts, BindingTable, LookupCounts, LookupTable,
                                         NamedCounts)
from stretto_core.learn.bindings.derived import has_piece, parse_template
from stretto_core.learn.bindings.derived_compile import derived_arg
from stretto_core.learn.bindings.named import class_lifts
from stretto_core.sessions.manifest import REQUIRED_SHARE

MIN_SOURCE_FOUND = 2.0
"""A source must have held at least this many of the agent's values."""

MIN_SOURCE_SHARE = 0.1
"""… and at least this share of the values looked for."""

MIN_SITE_VALUES = 5.0
"""A site with this many traced values tries sources in its own order."""

CLASS_PRIOR_WEIGHT = 10.0
"""The weight of the Beta prior that shrinks a class's ρ towards the pooled rate (the paper's is 2)."""

SITE_PRIOR_WEIGHT = 2.0
"""The weight of the Beta prior that shrinks a site's share of traced values towards the overall one."""

MIN_SITE_FACTOR_CHANGE = 0.01
"""A site's factor on ρ is kept when it is below 1 by at least this much."""

MIN_CONSTANT_CALLS = 5.0
"""A constant must have been passed in at least this many calls …"""

MIN_CONSTANT_SHARE = 0.5
"""… and in at least this share of the lookup's calls."""

MAX_DESCRIBED_SOURCES = 6
"""`describe` lists at most this many sources per argument."""

DEFAULT_ORDER = "*"
"""The key of the lookup's own order in `ArgTable.rho`."""


def compile_table(counts: BindingCounts, constants: bool) -> BindingTable:
    """The binding table of merged counts; deterministic in the counts."""
    lookups = {tool: _lookup(counts.lookups[tool], constants, tool, counts.named) for tool in sorted(counts.lookups)}
    version: Literal[2, 3, 4] = BINDINGS_FORMAT_VERSION if counts.named.called_other is not None else 2
    if any(a.mode == "derived" for lk in lookups.values() for a in lk.args.values()):
        version = DERIVED_FORMAT_VERSION
    return BindingTable(lookups=lookups, stretto_bindings=version)


def _lookup(counts: LookupCounts, constants: bool, tool: str = "", named: NamedCounts | None = None) -> LookupTable:
    calls = counts.calls
    required = sorted(a for a, c in counts.args.items() if calls > 0 and c.calls >= REQUIRED_SHARE * calls)
    fixed = {a: c for a, c in sorted(counts.args.items()) if constants and _is_constant(c, calls)}
    bound = [a for a in required if a not in fixed]
    base: dict[str, Any] = dict(calls=calls, bare_calls=counts.bare_calls, required=required)
    if not bound and not fixed:
        rho = 1.0 if counts.bare_calls >= calls else (counts.bare_calls + 1.0) / (calls + 2.0)
        return LookupTable(kind="bare", bare_rho=rho, **base)
    args: dict[str, ArgTable] = {}
    missing = []
    for name in bound:
        table = _arg(counts.args[name])
        if not table.sources:  # no exact source: a template that composes its values, if one does
            table = derived_arg(counts.args[name]) or table
        args[name] = table
        if not table.sources and table.mode != "derived":
            missing.append(name)
    for name, c in fixed.items():
        args[name] = ArgTable(mode="constant", constant=json.loads(c.constant or "null"), values=c.calls,
                              rho={DEFAULT_ORDER: {PLAIN: (c.calls + 1.0) / (calls + 2.0)}})
    if missing:
        return LookupTable(kind="unbound", args=args, reason="no source for " + ", ".join(missing), **base)
    if bound and all(args[a].mode == "derived" and not has_piece(parse_template(args[a].template or ""))
                     for a in bound):
        return LookupTable(kind="unbound", args=args, reason="only the agent's earlier arguments for "
                           + ", ".join(bound), **base)
    lead = _lead(args, bound)
    if lead is not None and named is not None and args[lead].mode == "value":
        lead_table = args[lead]
        lead_table.class_lift = class_lifts(named, tool, [s for o in (lead_table.sources, *lead_table.site_orders.values())
                                                          for s in o])
    return LookupTable(kind="bound", args=args, lead=lead, **base)


def _is_constant(c: ArgCounts, calls: float) -> bool:
    return (c.constant is not None and not c.varied and c.calls >= MIN_CONSTANT_CALLS
            and c.calls >= MIN_CONSTANT_SHARE * calls and c.found_in_result == 0 and not c.user_wrote)


def _arg(c: ArgCounts) -> ArgTable:
    as_list = c.list_calls * 2 > c.calls
    found, site_found, looked = ((c.list_found, c.list_site_found, c.lists) if as_list
                                 else (c.found, c.site_found, c.values))
    usable = [s for s in found if found[s] >= MIN_SOURCE_FOUND and found[s] >= MIN_SOURCE_SHARE * looked]
    order = sorted(usable, key=lambda s: (-found[s], s))
    rank = {s: i for i, s in enumerate(order)}
    site_orders: dict[str, list[str]] = {}
    for site, per_source in sorted(site_found.items()):
        if sum(per_source.values()) < MIN_SITE_VALUES:
            continue
        own = sorted((s for s in order if per_source.get(s, 0.0) > 0), key=lambda s: (-per_source[s], rank[s]))
        if own and own != order:
            site_orders[site] = own
    table = ArgTable(mode="list" if as_list else "value", sources=order, site_orders=site_orders,
                     site_factor=_site_factors(found, site_found, order, site_orders),
                     found=dict(sorted(found.items())), values=looked)
    orders = {DEFAULT_ORDER: order, **site_orders}
    if as_list:
        evidence = {PLAIN: c.list_evidence}
        for key, o in orders.items():
            table.rho[key], support = _rho(evidence, c.list_evaluated, o)
            if key == DEFAULT_ORDER:
                table.support = support
                table.pooled = table.pooled_aligned = _rate(support)
        return table
    for key, o in orders.items():
        table.rho[key], support = _rho(c.evidence.get(FREE, {}), c.evaluated.get(FREE, 0.0), o)
        table.rho_aligned[key], aligned = _rho(c.evidence.get(ALIGNED, {}), c.evaluated.get(ALIGNED, 0.0), o)
        if key == DEFAULT_ORDER:
            table.support, table.support_aligned = support, aligned
            table.pooled, table.pooled_aligned = _rate(support), _rate(aligned)
    return table


def _rho(evidence: dict[str, dict[str, list[float]]], evaluated: float,
         order: list[str]) -> tuple[dict[str, float], dict[str, list[float]]]:
    """ρ per class for one order, and the [k, n] behind it (module docstring)."""
    k = {c: 0.0 for c in CLASSES}
    n = {c: 0.0 for c in CLASSES}
    reach = 1.0
    for src in order:
        has_total = 0.0
        for cls in CLASSES:
            has, eq = evidence.get(cls, {}).get(src, (0.0, 0.0))
            k[cls] += reach * eq
            n[cls] += reach * has
            has_total += has
        if evaluated > 0:
            reach *= max(0.0, 1.0 - has_total / evaluated)
    support = {c: [k[c], n[c]] for c in CLASSES}
    pooled = _rate(support)
    rho = {c: (k[c] + CLASS_PRIOR_WEIGHT * pooled) / (n[c] + CLASS_PRIOR_WEIGHT) for c in CLASSES}
    return rho, support


def _site_factors(found: dict[str, float], site_found: dict[str, dict[str, float]], order: list[str],
                  site_orders: dict[str, list[str]]) -> dict[str, float]:
    """Site -> f_s < 1, the site's share of values traced to its order over the overall share (module docstring)."""
    total = sum(found.values())
    if total <= 0 or not order:
        return {}
    share = sum(found.get(s, 0.0) for s in order) / total
    if share <= 0:
        return {}
    factors: dict[str, float] = {}
    for site, per_source in sorted(site_found.items()):
        traced = sum(per_source.values())
        own = sum(per_source.get(s, 0.0) for s in site_orders.get(site, order))
        factor = (own + SITE_PRIOR_WEIGHT * share) / (traced + SITE_PRIOR_WEIGHT) / share
        if factor <= 1.0 - MIN_SITE_FACTOR_CHANGE:
            factors[site] = factor
    return factors


def _rate(support: dict[str, list[float]]) -> float:
    """ρ̄ = (K + 1) / (N + 2), pooled over classes."""
    return (sum(s[0] for s in support.values()) + 1.0) / (sum(s[1] for s in support.values()) + 2.0)


def _pooled(table: ArgTable, aligned: bool) -> float:
    return table.pooled_aligned if aligned and table.mode == "value" else table.pooled


def _lead(args: dict[str, ArgTable], bound: list[str]) -> str | None:
    """The bound argument whose free ρ̄ times the others' aligned ρ̄ is largest (first by name)."""
    if not bound:
        return None
    best, best_score = bound[0], -1.0
    for lead in bound:
        score = _pooled(args[lead], aligned=False)
        for other in bound:
            if other != lead:
                score *= _pooled(args[other], aligned=True)
        if score > best_score:
            best, best_score = lead, score
    return best


def describe_table(table: BindingTable, tool: str | None = None) -> str:
    """Plain text, one block per lookup: kind, arguments, sources with counts, ρ per class.

    Usable sources are marked `*`; `k/n` after a ρ are the effective agreements and picks behind it.
    """
    lines: list[str] = []
    for name in ([tool] if tool else sorted(table.lookups)):
        lookup = table.lookups.get(name)
        if lookup is None:
            lines.append(f"{name}: never read in training")
            continue
        head = f"{name}: {lookup.kind}, {lookup.calls:g} calls"
        if lookup.kind == "bare":
            lines.append(f"{head}, {lookup.bare_calls:g} with no argument, ρ {lookup.bare_rho:.3f}")
            continue
        lines.append(head + (f" ({lookup.reason})" if lookup.reason else ""))
        for arg in sorted(lookup.args, key=lambda a: (a != lookup.lead, a)):
            lines.extend(_describe_arg(arg, lookup.args[arg], lookup.lead))
    return "\n".join(lines)


def _describe_arg(arg: str, at: ArgTable, lead_arg: str | None) -> list[str]:
    if at.mode == "derived":
        k, n = at.support.get(PLAIN, [0.0, 0.0])
        found = at.found.get(at.template or "", 0.0)
        return [f"  {arg} (derived{', lead' if arg == lead_arg else ''}): {at.template}",
                f"    composed {found:g} of {at.values:g} values, ρ {at.pooled:.3f} ({k:.0f}/{n:.0f})"]
    if at.mode == "constant":
        return [f"  {arg} (constant): {json.dumps(at.constant)}, ρ {at.rho[DEFAULT_ORDER][PLAIN]:.3f}"]
    lead = arg == lead_arg
    role = "lead" if lead else ("aligned" if at.mode == "value" and lead_arg is not None else "")
    lines = [f"  {arg} ({', '.join(x for x in (at.mode, role) if x)}): {at.values:g} looked for"]
    usable = set(at.sources)
    for src, n in sorted(at.found.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_DESCRIBED_SOURCES]:
        share = f" ({n / at.values:.0%})" if at.values else ""
        lines.append(f"   {'*' if src in usable else ' '} {src}  {n:g}{share}")
    if not at.sources:
        return lines
    aligned = not lead and at.mode == "value" and bool(at.rho_aligned)
    rho = (at.rho_aligned if aligned else at.rho)[DEFAULT_ORDER]
    support = at.support_aligned if aligned else at.support
    classes = [PLAIN] if at.mode == "list" else list(CLASSES)
    lines.append("    ρ " + ", ".join(f"{c} {rho[c]:.3f} ({support.get(c, [0, 0])[0]:.0f}/{support.get(c, [0, 0])[1]:.0f})"
                                      for c in classes))
    for site, order in sorted(at.site_orders.items()):
        lines.append(f"    at {site}: " + " > ".join(order))
    return lines
