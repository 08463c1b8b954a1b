"""A served-loop round is judged against the reference strictly (10%) and beyond the reference's own noise."""

from __future__ import annotations

from stretto_core.evaluate.round_spread import beyond, outside, reference_spread, within_share
from stretto_core.evaluate.served_loop import RoundScore


def round_of(rows: list[tuple[str, int, int]]) -> RoundScore:
    return RoundScore(episodes=len(rows), saved=sum(r[1] for r in rows), detours=sum(r[2] for r in rows),
                      by_episode=rows)


def test_the_strict_judgement_is_ten_percent_of_the_reference() -> None:
    assert within_share(105, 100) and within_share(90, 100)
    assert not within_share(111, 100) and not within_share(89, 100)
    assert within_share(0, 0) and not within_share(1, 0)


def test_a_few_uneven_episodes_give_the_reference_a_wide_interval() -> None:
    reference = round_of([("t1", 0, 0), ("t2", 12, 1), ("t3", 1, 6), ("t4", 2, 0)])
    saved, detours = reference_spread(reference)
    assert saved.point == 15 and detours.point == 7
    assert saved.low < 10 and saved.high > 20  # more than 10% either way on resampling alone
    served = round_of([("t1", 0, 0), ("t2", 11, 1), ("t3", 1, 7), ("t4", 0, 0)])  # 12 saved, 8 detours
    judged = outside(served, reference)
    assert judged["saved"] and judged["detours"]  # strictly, both are more than 10% off
    assert not judged["saved_beyond_noise"] and not judged["detours_beyond_noise"]


def test_a_round_far_off_a_steady_reference_is_outside_by_both_judgements() -> None:
    reference = round_of([(f"t{i}", 3, 1) for i in range(12)])  # every task alike: no spread
    saved, _ = reference_spread(reference)
    assert saved.low == saved.high == 36
    served = round_of([(f"t{i}", 3, 3) for i in range(12)])
    judged = outside(served, reference)
    assert not judged["saved"] and not judged["saved_beyond_noise"]
    assert judged["detours"] and judged["detours_beyond_noise"]


def test_episodes_of_one_task_are_drawn_together() -> None:
    reference = round_of([("t1", 5, 0), ("t1", 5, 0)])
    saved, _ = reference_spread(reference)
    assert saved.low == saved.high == 10  # one task: every draw takes both of its episodes
    assert beyond(11, saved) and not beyond(10, saved)
