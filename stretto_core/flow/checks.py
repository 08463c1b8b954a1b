"""A flow file is checked before anything reads it: its numbers, its contexts, and its derived parts.

A flow file is text anyone can edit, and what it says decides which tools get called, so it is
trusted no further than its counts. Every count, weight and threshold must be a finite number,
counts and weights at least 0; every context has the flow's order and is made of step symbols;
each α is a positive number; and the derived parts (`vocab`, `alpha`, `reach_alpha`, `table`,
`intent_table`, `pinned`) are derived
again from the counts and must equal what the file stores. A file that fails says which field
and why (`file: field: problem`), never a traceback. Which tools are reads is still not the
file's to say: serving also needs an independent authority (`serve/engine.py`).

One reader skips them: a deployment's next command reading back the very bytes the last one wrote
(its log names their SHA-256, `flow/history.py`), made of flows checked and sessions counted;
bytes edited since are checked in full, and a server checks in full all it serves.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from stretto_core.learn.counts import START
from stretto_core.learn.steps import OUTCOMES

DERIVED = ("vocab", "alpha", "reach_alpha", "table", "intent_table", "pinned")
"""The parts of a flow that are functions of its counts."""

COUNTED = ("provenance", "counts", "bindings", "contracts", "intent", "site_calibration")
"""The parts of a flow whose every number is a count or a weight: finite and at least 0."""

MAX_ORDER = 8
"""The longest context a flow may count (learning uses 2)."""

_RHO_FIELDS = ("rho", "rho_aligned")


def number_problems(data: dict[str, Any]) -> list[str]:
    """Every count or weight of a flow's JSON that is not a finite number ≥ 0, and bad thresholds."""
    problems = []
    for part in COUNTED:
        for where, value in _numbers(data.get(part), part):
            if not math.isfinite(value) or value < 0:
                problems.append(f"{where}: {value!r} is not a finite number ≥ 0")
    thresholds = data.get("thresholds")
    if isinstance(thresholds, dict):
        for site, value in thresholds.items():
            if not _real(value) or not math.isfinite(value) or value < 0:
                problems.append(f"thresholds.{site}: {value!r} is not a finite number ≥ 0")
    for field in ("alpha", "reach_alpha"):
        alpha = data.get(field)
        if isinstance(alpha, dict):
            for name in ("alpha", "lower", "upper"):
                value = alpha.get(name)
                if _real(value) and not (math.isfinite(value) and value > 0):
                    problems.append(f"{field}.{name}: {value!r} is not a positive number")
    return problems


def _real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers(node: Any, where: str) -> Iterator[tuple[str, int | float]]:
    """Every number under a JSON value, with its path; strings (symbols, names) are skipped."""
    stack = [(node, where)]
    while stack:
        value, at = stack.pop()
        if isinstance(value, dict):
            stack.extend((v, f"{at}.{k}") for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(value))
        elif _real(value):
            yield at, value


def counts_problems(data: dict[str, Any]) -> list[str]:
    """The counts' order and contexts: each context `order` step symbols, padded on the left only."""
    counts = data.get("counts")
    if not isinstance(counts, dict):
        return []
    order = counts.get("order")
    if not isinstance(order, int) or isinstance(order, bool) or not 1 <= order <= MAX_ORDER:
        return [f"counts.order: {order!r} is not a context length from 1 to {MAX_ORDER}"]
    return _each_row(counts, lambda table, row, totals: _row_problem(row, order))


def reach_problems(data: dict[str, Any]) -> list[str]:
    """Reach counts above the steps counted after their context (call after `counts_problems`)."""
    counts = data.get("counts")
    return _each_row(counts, _reach_problem) if isinstance(counts, dict) else []


def _each_row(counts: dict[str, Any], check: Any) -> list[str]:
    problems: list[str] = []
    for g, group in enumerate(counts.get("groups") or []):
        if not isinstance(group, dict):
            continue
        totals: dict[tuple[str, ...], float] = {}
        for table in ("habit", "reach"):
            for r, row in enumerate(group.get(table) or []):
                problem = check(table, row, totals)
                if problem:
                    problems.append(f"counts.groups[{g}].{table}[{r}]: {problem}")
                    if len(problems) >= 5:
                        return problems
    return problems


def _reach_problem(table: str, row: list[Any], totals: dict[tuple[str, ...], float]) -> str | None:
    """A reach count above the steps counted after its context: a use more often than possible."""
    pairs = row[1] if isinstance(row[1], list) else []
    counts = [p[1] for p in pairs if isinstance(p, list) and len(p) == 2 and _real(p[1])]
    context = tuple(str(s) for s in row[0])
    if table == "habit":
        totals[context] = sum(counts)
        return None
    most = max(counts, default=0)
    if most > totals.get(context, 0):
        return f"a reach count of {most!r} after a context the habit counts {totals.get(context, 0)!r} steps after"
    return None


def _row_problem(row: Any, order: int) -> str | None:
    if not isinstance(row, list) or len(row) != 2 or not isinstance(row[0], list):
        return "not a [context, counts] pair"
    context = row[0]
    if len(context) != order:
        return f"a context of {len(context)} symbols in counts of order {order}"
    padded = True
    for symbol in context:
        if symbol == START and padded:
            continue
        padded = False
        if not _is_symbol(symbol):
            return f"{symbol!r} is not a step symbol (tool/outcome/feature)"
    return None


def _is_symbol(symbol: Any) -> bool:
    if not isinstance(symbol, str):
        return False
    parts = symbol.rsplit("/", 2)
    return len(parts) == 3 and bool(parts[0]) and parts[1] in OUTCOMES and parts[2].isdigit()


DERIVED_REL_TOL = 1e-9
"""How far a stored derived number may be from the one derived again, relative to it. Sums of
fractional weights (a prior's) land a few units in the last digit apart when added in another
order (a loaded flow's keys are sorted); an edit that changes what the flow serves moves a
number far more than this."""

DERIVED_ABS_TOL = 1e-12
"""The same near zero, where a relative tolerance says nothing."""


def derived_problems(stored: dict[str, Any], derived: dict[str, Any]) -> list[str]:
    """Each derived part the file stores that differs from the one derived from its counts
    (numbers within `DERIVED_REL_TOL` of each other are the same; every other value exactly)."""
    return [f"{name}: does not match what the flow's counts give (edited by hand?); relearn the flow, "
            f"or delete `{name}` to derive it again" for name in DERIVED
            if name in stored and not same_derived(stored[name], derived[name])]


def same_derived(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal, numbers up to the derived tolerance (iterative: no
    depth can overflow the stack)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, bool) or isinstance(y, bool):
            if x is not y:
                return False
        elif isinstance(x, (int, float)) and isinstance(y, (int, float)):
            if not math.isclose(x, y, rel_tol=DERIVED_REL_TOL, abs_tol=DERIVED_ABS_TOL):
                return False
        elif isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif x != y or type(x) is not type(y):
            return False
    return True


def table_problems(table: dict[str, Any]) -> list[str]:
    """Each ρ of a binding table outside [0, 1]: counts that cannot have come from sessions."""
    problems = []
    for tool, lookup in (table.get("lookups") or {}).items():
        bare = lookup.get("bare_rho")
        if bare is not None and not 0.0 <= bare <= 1.0:
            problems.append(f"table.lookups.{tool}.bare_rho: {bare!r} is outside [0, 1]")
        for arg, spec in (lookup.get("args") or {}).items():
            for where, value in _rhos(spec):
                if not 0.0 <= value <= 1.0:
                    problems.append(f"table.lookups.{tool}.args.{arg}.{where}: ρ = {value!r} is outside "
                                    f"[0, 1]; the binding counts are inconsistent")
    return problems


def _rhos(spec: dict[str, Any]) -> Iterator[tuple[str, float]]:
    for name in _RHO_FIELDS:
        for order, by_class in (spec.get(name) or {}).items():
            for cls, value in by_class.items():
                yield f"{name}.{order}.{cls}", value
    for name in ("pooled", "pooled_aligned"):
        if spec.get(name) is not None:
            yield name, spec[name]
