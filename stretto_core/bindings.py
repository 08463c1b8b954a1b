"""Bindings: where each argument of each read comes from, and the chance ρ it is the agent's own.

Paper §2.4 ("The arguments") and Appendix D ("Lists", "Lookups without arguments",
"Constants"). The work is split by job:

- `bindings_model`: the additive counts (`BindingCounts`), the compiled table (`BindingTable`),
  `Binding`, site and source names;
- `bindings_pick`: the pick at a source, mention classes, record alignment (shared by learning
  and serving, so what is scored is what is served);
- `bindings_learn`: one session's counts: provenance per site, list provenance, per-source pick
  evidence per mention class, constants evidence;
- `bindings_compile`: required arguments, usable sources and their orders, ρ per class;
- `bindings_bind`: `bind(table, tool, state, site)`.

In one line each:

    provenance   value v of argument a of read t  ->  (tool, path) of the newest result holding v
    usable       found ≥ 2 and found ≥ 10% of values; order by count (per site when ≥ 5 traced)
    pick         first value at the path not yet passed to t as a, a mentioned one first
    ρ_c          (k_c + 2 ρ̄) / (n_c + 2),   ρ̄ = (K + 1) / (N + 2),   classes
                 plain | mentioned | named_other | described_read
    bare         ρ = (bare + 1) / (calls + 2), or 1 when every call was bare

Usage:

    counts = BindingCounts()
    for session in sessions:
        counts.add_session(session, manifest)
    table = counts.compile()
    binding = bind(table, "get_order_details", state, site_name("get_user_details"))
"""

from stretto_core.bindings_bind import CONSTANT_SOURCE, bind
from stretto_core.bindings_compile import (MIN_CONSTANT_CALLS, MIN_CONSTANT_SHARE, MIN_SITE_VALUES,
                                           MIN_SOURCE_FOUND, MIN_SOURCE_SHARE, PRIOR_WEIGHT)
from stretto_core.bindings_learn import count_session
from stretto_core.bindings_model import (BINDINGS_FORMAT_VERSION, CLASSES, DESCRIBED_READ, MENTIONED,
                                         NAMED_OTHER, PLAIN, START_SITE, ArgCounts, ArgTable, Binding,
                                         BindingCounts, BindingTable, LookupCounts, LookupTable, site_name,
                                         source_key, split_source)


def count_bindings(session, manifest, weight: float = 1.0, constants: bool = False) -> BindingCounts:
    """One session's counts at `weight` (the function form of `BindingCounts.add_session`)."""
    counts = BindingCounts()
    counts.add_session(session, manifest, weight=weight, constants=constants)
    return counts


__all__ = [
    "BINDINGS_FORMAT_VERSION", "CLASSES", "CONSTANT_SOURCE", "DESCRIBED_READ", "MENTIONED", "MIN_CONSTANT_CALLS",
    "MIN_CONSTANT_SHARE", "MIN_SITE_VALUES", "MIN_SOURCE_FOUND", "MIN_SOURCE_SHARE", "NAMED_OTHER", "PLAIN",
    "PRIOR_WEIGHT", "START_SITE", "ArgCounts", "ArgTable", "Binding", "BindingCounts", "BindingTable",
    "LookupCounts", "LookupTable", "bind", "count_bindings", "count_session", "site_name", "source_key",
    "split_source",
]
