"""Bindings: where each argument of each read comes from, and the chance ρ it is the agent's own.

Paper §2.4 ("The arguments") and Appendix D ("Lists", "Lookups without arguments",
"Constants"). The work is split by job:

- `model`: the additive counts (`BindingCounts`), the compiled table (`BindingTable`),
  `Binding`, site and source names (the bottom layer: it imports none of the others);
- `mention`, `pick`: mention classes and the pick at a source, record alignment (shared by
  learning and serving, so what is scored is what is served);
- `sources`, `evidence`: one session's counts: provenance per site, list provenance, per-source
  pick evidence per mention class, constants evidence;
- `compile`: required arguments, usable sources and their orders, ρ per class;
- `derived`, `derived_learn`, `derived_compile`: values composed from the agent's earlier
  arguments, tokens of free-text results and record fields with literals (templates), for
  arguments no exact source binds (docs/derived-bindings.md);
- serving binds from the compiled table: `stretto_core.serve.bind.bind(table, tool, state, site)`.

In one line each:

    provenance   value v of argument a of read t  ->  (tool, path) of the newest result holding v
    usable       found ≥ 2 and found ≥ 10% of values; order by count (per site when ≥ 5 traced)
    pick         first value at the path not yet passed to t as a, a mentioned one first
    ρ_c          (k_c + 10 ρ̄) / (n_c + 10),   ρ̄ = (K + 1) / (N + 2),   classes
                 plain | mentioned | named_other | described_read
    at a site    ρ · f_s, f_s the site's share of values traced to the order over the overall share
    bare         ρ = (bare + 1) / (calls + 2), or 1 when every call was bare

Usage:

    counts = BindingCounts()
    for session in sessions:
        add_session(counts, session, manifest)
    table = compile_table(counts)
    binding = bind(table, "get_order_details", state, site_name("get_user_details"))  # serve.bind
"""

from typing import Any

from stretto_core.learn.bindings.compile import (MIN_CONSTANT_CALLS, MIN_CONSTANT_SHARE, MIN_SITE_VALUES,
                                           MIN_SOURCE_FOUND, MIN_SOURCE_SHARE, CLASS_PRIOR_WEIGHT)
from stretto_core.learn.bindings.compile import compile_table as _compile_table
from stretto_core.learn.bindings.compile import describe_table
from stretto_core.learn.bindings.evidence import count_session, count_session_into
from stretto_core.learn.bindings.model import (BINDINGS_FORMAT_VERSION, CLASSES, DESCRIBED_READ, MENTIONED,
                                         DEFAULT_OPTIONS, NAMED_OTHER, PLAIN, START_SITE, ArgCounts,
                                         ArgTable, Binding, BindingOptions,
                                         BindingCounts, BindingTable, LookupCounts, LookupTable, site_name,
                                         source_key, split_source)


def add_session(counts: BindingCounts, session: Any, manifest: Any, weight: float = 1.0,
                constants: bool = False, options: BindingOptions = DEFAULT_OPTIONS) -> None:
    """Count one session's read calls into `counts`, in place, at `weight`."""
    if weight == 1.0:  # the session's counts added at weight 1 are its counts, added as counted
        count_session_into(counts, session, manifest, options)
        counts.sessions += 1.0
    else:
        counts.add(count_session(session, manifest, options), weight)
    counts.constants = counts.constants or constants
    counts.mark_derived()
    if options.user_words:
        counts.user_words = options.user_words


def compile_table(counts: BindingCounts, constants: bool | None = None) -> BindingTable:
    """The table bindings are served from; `constants` overrides the learned flag."""
    return _compile_table(counts, counts.constants if constants is None else constants)


def count_bindings(session: Any, manifest: Any, weight: float = 1.0, constants: bool = False) -> BindingCounts:
    """One session's counts at `weight` (a new `BindingCounts`)."""
    counts = BindingCounts()
    add_session(counts, session, manifest, weight=weight, constants=constants)
    return counts


__all__ = [
    "BINDINGS_FORMAT_VERSION", "CLASSES", "DESCRIBED_READ", "MENTIONED", "MIN_CONSTANT_CALLS",
    "MIN_CONSTANT_SHARE", "MIN_SITE_VALUES", "MIN_SOURCE_FOUND", "MIN_SOURCE_SHARE", "NAMED_OTHER", "PLAIN",
    "CLASS_PRIOR_WEIGHT", "START_SITE", "ArgCounts", "ArgTable", "Binding", "BindingCounts", "BindingTable",
    "LookupCounts", "LookupTable", "add_session", "compile_table", "count_bindings", "count_session",
    "describe_table", "site_name", "source_key",
    "split_source",
]
