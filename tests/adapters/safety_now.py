"""The property every adapter's "known read now" test checks, over one set of generated cases.

A case: a tool set (each tool hinted read, write, destructive or none, vouched read or write by
the operator), a flow learned from walks of a habit, a served walk of it, a theta, and one tool
of the habit re-annotated before one of the calls. `run_case` serves the walk through one
adapter and returns each lookup that reached a tool with the tool's hint at that moment.
"""

from __future__ import annotations

from typing import Any, Callable

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from stretto_core import Flow, ToolKind, ToolManifest, learn_flow
from test_claude_safety_property import TOOLS, Tools, as_session, histories, tool_sets

HINTS = ["read", "write", "destructive", "none"]
RunCase = Callable[[Tools, Flow, float, list, tuple], list]


def known_now(name: str, hint: str, tools: Tools) -> bool:
    """A known read at that moment: hinted read-only, or unhinted and vouched; never declared a write."""
    return name not in tools.writes and (hint == "read" or (hint == "none" and name in tools.reads))


def now_property(run_case: RunCase, made: list[int], changed: list[int], examples: int, *,
                 expect_failure: bool = False) -> Any:
    """The property as a runnable hypothesis test; `made` gets each case's lookup count and
    `changed` whether its re-annotation came before a call. Where it must fail, it stops at the
    first failing case (no shrinking, nothing saved)."""
    extra: dict[str, Any] = {"phases": (Phase.generate,), "database": None} if expect_failure else {}

    @settings(derandomize=True, max_examples=examples, deadline=None,
              suppress_health_check=[HealthCheck.too_slow], **extra)
    @given(tools=tool_sets(), history=histories(),
           learned_kinds=st.dictionaries(st.sampled_from(TOOLS), st.sampled_from([ToolKind.read, ToolKind.write])),
           theta=st.sampled_from([0.0, 0.05, 0.3]),
           change=st.tuples(st.integers(1, 6), st.integers(0, 5), st.sampled_from(HINTS + ["write", "destructive"])))
    def check(tools: Tools, history: tuple, learned_kinds: dict, theta: float, change: Any) -> None:
        train, served = history
        change = (change[0], served[min(change[1], len(served) - 1)][0], change[2])  # a tool of the habit
        learned = ToolManifest.declare(reads=[t for t in TOOLS if learned_kinds.get(t, ToolKind.read) is ToolKind.read],
                                       writes=[t for t in TOOLS if learned_kinds.get(t) is ToolKind.write])
        flow = learn_flow([as_session(w, i) for i, w in enumerate(train)], learned)
        lookups = run_case(tools, flow, theta, served, change)
        for name, hint in lookups:
            assert known_now(name, hint, tools), \
                f"looked up {name} while hinted {hint} (reads {sorted(tools.reads)}, writes {sorted(tools.writes)})"
        made.append(len(lookups))
        changed.append(int(change[0] < len(served)))

    return check


def assert_exercised(made: list[int], changed: list[int], least: int) -> None:
    """A property no case exercised proves nothing: enough cases ran, made lookups, and changed a tool."""
    print(f"{sum(1 for n in made if n)} of {len(made)} cases made lookups, {sum(made)} in all; "
          f"{sum(changed)} re-annotated a tool mid-session")
    assert len(made) >= least
    assert sum(1 for n in made if n) >= 0.2 * len(made), f"only {sum(1 for n in made if n)} of {len(made)} made lookups"
    assert sum(changed) >= 0.2 * len(made), f"only {sum(changed)} of {len(made)} re-annotated a tool before a call"
