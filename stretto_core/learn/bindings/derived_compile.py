"""From derived counts to a served argument: the template, and its ρ.

An argument with no usable exact source (`bindings_compile`) may be bound by a template
(`bindings_derived`) when one composed at least `MIN_SOURCE_FOUND` of its values and at least
`MIN_SOURCE_SHARE` of the values looked for, the thresholds of an exact source, in at least
`MIN_SESSIONS` sessions. Of those, the one that composed most values (then the higher ρ, then
the key). Its ρ, from [found, n_has, n_eq, calls, sessions] summed over sessions and the
argument's own `calls`:

    n = n_has + (calls of the argument - calls)      every call of a session that never composed
                                                      the template counts as a pick that missed
    ρ = (n_eq + 1) / (n + 2)

Arguments with a usable exact source are never derived: where exact bindings serve today
(τ², AgentDojo), nothing changes.
"""

from __future__ import annotations

from stretto_core.learn.bindings.model import CLASSES, PLAIN, ArgCounts, ArgTable

MIN_SOURCE_FOUND = 2.0
MIN_SOURCE_SHARE = 0.1
MIN_SESSIONS = 2.0
"""A template must have composed values in at least this many sessions: a literal or an anchor
of one session's values is never served (nor is one conversation's habit)."""


def derived_rho(cell: list[float], arg_calls: float) -> tuple[float, float, float]:
    """(ρ, k, n) of one template's [found, n_has, n_eq, calls] (module docstring)."""
    _found, has, eq, calls = cell[:4]
    n = has + max(0.0, arg_calls - calls)
    return (eq + 1.0) / (n + 2.0), eq, n


def derived_arg(c: ArgCounts) -> ArgTable | None:
    """The served table of an argument bound by its best template, or None when none is usable."""
    if c.derived is None or not c.derived.templates:
        return None
    looked = max(c.values, 1.0)
    best: tuple[float, float, str] | None = None
    for key, cell in c.derived.templates.items():
        if cell[0] < MIN_SOURCE_FOUND or cell[0] < MIN_SOURCE_SHARE * looked or cell[4] < MIN_SESSIONS:
            continue
        rho, _k, _n = derived_rho(cell, c.calls)
        rank = (cell[0], rho, key)
        if best is None or rank[:2] > best[:2] or (rank[:2] == best[:2] and key < best[2]):
            best = rank
    if best is None:
        return None
    key = best[2]
    rho, k, n = derived_rho(c.derived.templates[key], c.calls)
    return ArgTable(mode="derived", template=key, values=c.values,
                    found={k_: cell[0] for k_, cell in sorted(c.derived.templates.items())},
                    rho={"*": {cls: rho for cls in CLASSES}}, support={PLAIN: [k, n]},
                    pooled=rho, pooled_aligned=rho)
