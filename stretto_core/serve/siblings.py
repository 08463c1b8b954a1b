"""The reach of a read of a record the user named, after the speculator's own read of another.

Algorithm 1 appends each lookup to the history as the agent's next step and scores the rest on
that history. For a second record of the same listing that is unfaithful: when the customer
named two items of an order, the agent reads both products, but after the speculator's read of
the first the history says "the agent just read a product", where τ² retail's agents mostly
write next (reach 0.51 before the read, 0.32 after it). So the read of another record the user
named (its pick's class `mentioned`) is scored at the history before this decision's own
trailing lookups of that tool: the two named records are alternatives of one step, not one
after the other. Picks the user did not name keep the history as it is: a listing's unnamed
records are read one by one far less often (scored at the earlier history, τ² retail made 123
more detours for 12 more saved turns).

`chain` is how many of the history's newest steps are this decision's own lookups (those made
since the agent's last tool result); the agent's own steps are never taken away.
"""

from __future__ import annotations

from typing import Sequence


def sibling_history(history: Sequence[str], chain: int, tool: str) -> Sequence[str]:
    """`history` without its trailing steps of `tool` that this decision's own lookups made."""
    cut = 0
    while cut < chain and cut < len(history) and _action(history[-1 - cut]) == tool:
        cut += 1
    return history[:len(history) - cut] if cut else history


def _action(symbol: str) -> str:
    """The tool of a step's symbol `action/outcome/feature` (`learn/steps.py`)."""
    return symbol.rsplit("/", 2)[0]
