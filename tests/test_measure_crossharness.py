"""Across harnesses: two speculators on the same tests, and what the other harnesses' keeps."""

from __future__ import annotations

from stretto_core.evaluate.measure.crossharness import HarnessCase, cross_harness, render_cross_harness
from test_measure_curves import sessions
from test_measure_rows import shop_sessions


def test_learning_from_the_same_sessions_either_way_keeps_everything_and_differs_by_nothing() -> None:
    train = sessions(10, "them", start=50)
    cases = [HarnessCase(agent=f"a{i}", harness="h", test=shop_sessions(6), own_harness=train, other_harnesses=train)
             for i in range(2)]
    rows = cross_harness("shop", cases, draws=100)
    assert [r.group for r in rows] == ["shop: a0 (h)", "shop: a1 (h)", "shop"]
    pooled = rows[-1]
    assert pooled.kept_saved == 1.0
    assert pooled.comparison.difference.turns_saved.point == 0.0
    assert "Kept" in render_cross_harness(rows)


def test_an_agent_without_sessions_in_another_harness_is_left_out() -> None:
    case = HarnessCase(agent="a", harness="h", test=shop_sessions(4), own_harness=sessions(5, "b"), other_harnesses=[])
    assert cross_harness("shop", [case]) == []
