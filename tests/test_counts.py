"""The habit and the reach: back-off formulas on tiny sequences, merging, serialization."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from stretto_core.learn.counts import START, BackoffModel, Counts, vocabulary

A, B, W = "a/ok/0", "b/ok/0", "w/ok/0"
R = "reply/answered/0"
C = "c/ok/0"


def _seq(*symbols: str) -> tuple[list[str], list[str]]:
    return list(symbols), [s.split("/")[0] for s in symbols]


def _is_write(action: str) -> bool:
    return action == "w"


def _close(x: float, fraction: Fraction) -> bool:
    return abs(x - float(fraction)) < 1e-12


# -- the habit ------------------------------------------------------------------------------------

def _two_sessions() -> Counts:
    # session 1: a b a; session 2: a a
    return Counts.learn([_seq(A, B, A), _seq(A, A)], _is_write)


def test_the_habit_backs_off_level_by_level_from_uniform_as_computed_by_hand():
    model = BackoffModel(_two_sessions(), alpha=1.0, vocab_size=4)
    # level 0: n = 5 (a 4, b 1): p0(a) = (4 + 1/4)/6 = 17/24, p0(b) = 5/24, unseen 1/24
    # level 1 after `a`: a 1, b 1: p1(a) = (1 + 17/24)/3 = 41/72, p1(b) = 29/72, unseen 1/72
    # level 2 after (START, a): a 1 (session 2), b 1 (session 1): p2(a) = (1 + 41/72)/3 = 113/216
    history = [A]
    assert _close(model.habit_of(history, "a"), Fraction(113, 216))
    assert _close(model.habit_of(history, "b"), Fraction(101, 216))
    assert _close(model.habit_of(history, "never-seen"), Fraction(1, 216))
    # over the whole vocabulary of four actions the habit sums to one
    assert abs(sum(model.habit(history).values()) + 2 * model.habit_of(history, "x") - 1) < 1e-12


def test_an_unseen_longer_context_keeps_the_shorter_levels_value():
    model = BackoffModel(_two_sessions(), alpha=1.0, vocab_size=4)
    # (b, b) was never seen, but `b` was (followed by a once): p1(a | b) = (1 + 17/24)/2 = 41/48
    assert _close(model.habit_of([B, B], "a"), Fraction(41, 48))
    # an unknown symbol: only level 0 applies
    assert _close(model.habit_of(["zzz/ok/0"], "a"), Fraction(17, 24))


def test_the_first_step_is_predicted_after_the_start_padding():
    model = BackoffModel(_two_sessions(), alpha=1.0, vocab_size=4)
    assert model.context_of([]) == (START, START)
    assert model.context_of([A, B, A]) == (B, A)
    # (START, START) was followed by `a` twice: p1 = (2 + 17/24)/3 = 65/72; p2 = (2 + 65/72)/3
    assert _close(model.habit_of([], "a"), (2 + Fraction(65, 72)) / 3)


def test_a_larger_alpha_pulls_every_context_towards_its_shorter_one():
    counts = _two_sessions()
    sharp = BackoffModel(counts, alpha=0.01, vocab_size=4).habit_of([B], "a")
    flat = BackoffModel(counts, alpha=100.0, vocab_size=4).habit_of([B], "a")
    assert sharp > 0.99 and flat < 0.3  # `b` was always followed by `a`, and 1/4 is uniform


# -- the reach ------------------------------------------------------------------------------------

def test_the_reach_counts_a_read_made_two_steps_later_but_not_after_a_write():
    counts = Counts.learn([_seq(A, R, B, W, C)], _is_write)
    # windows: a {a, reply, b}; reply {reply, b}; b {b}; the write {}; c {c}
    assert counts.reach_level(2)[(START, START)] == {"a": 1.0, "reply": 1.0, "b": 1.0}
    assert counts.reach_level(0)[()] == {"a": 1.0, "reply": 2.0, "b": 3.0, "c": 1.0}
    model = BackoffModel(counts, alpha=1.0, vocab_size=5)
    # b: r0 = (3 + 1/5)/6 = 8/15; r1 = (1 + 8/15)/2 = 23/30; r2 = (1 + 23/30)/2 = 53/60
    assert _close(model.reach([], "b"), Fraction(53, 60))
    # c came only after the write: r0 = (1 + 1/5)/6 = 1/5, r1 = 1/10, r2 = 1/20
    assert _close(model.reach([], "c"), Fraction(1, 20))
    assert model.reach_all([], ["b", "c"]) == {"b": model.reach([], "b"), "c": model.reach([], "c")}


def test_the_reach_of_several_reads_need_not_sum_to_one():
    counts = Counts.learn([_seq(A, B, C, W)] * 5, _is_write)
    model = BackoffModel(counts, alpha=1.0, vocab_size=4)
    reach = model.reach_all([], ["a", "b", "c"])
    assert all(r > 0.9 for r in reach.values()) and sum(reach.values()) > 2.5


def test_a_write_step_has_an_empty_window_but_counts_in_its_context():
    counts = Counts.learn([_seq(W, A)], _is_write)
    assert (START, START) not in counts.reach_level(2)
    assert counts.habit_level(2)[(START, START)] == (1.0, {"w": 1.0})
    model = BackoffModel(counts, alpha=1.0, vocab_size=2)
    # a is reached from the start context's level 0 only: r0 = (1 + 1/2)/3 = 1/2; r1 = r2 halve it
    assert _close(model.reach([], "a"), Fraction(1, 8))


# -- weights, merging and serialization --------------------------------------------------------------

def _random_sessions(seed: int, n: int) -> list[tuple[list[str], list[str]]]:
    rng = random.Random(seed)
    symbols = [A, B, C, W, R, "a/failed/0", "b/ok/3"]
    return [_seq(*rng.choices(symbols, k=rng.randint(1, 12))) for _ in range(n)]


@pytest.mark.parametrize("weight", [1.0, 100 / 1184, 0.3])
def test_learning_two_halves_and_merging_equals_learning_at_once_exactly(weight: float):
    sessions = _random_sessions(7, 60)
    at_once = Counts.learn(sessions, _is_write, weight=weight)
    halves = Counts.learn(sessions[:25], _is_write, weight=weight).merged(
        Counts.learn(sessions[25:], _is_write, weight=weight))
    assert halves == at_once
    assert halves.to_json() == at_once.to_json()
    a, b = BackoffModel(at_once, 0.7, 8), BackoffModel(halves, 0.7, 8)
    for history in ([], [A], [B, W], [R, "b/ok/3"]):
        assert a.habit(history) == b.habit(history)
        assert a.reach(history, "b") == b.reach(history, "b")


def test_a_power_prior_weighs_another_sources_counts():
    own = Counts.learn(_random_sessions(1, 10), _is_write)
    other = Counts.learn(_random_sessions(2, 1184), _is_write)
    merged = own.merged(other, weight=100 / 1184)
    assert merged.weights == [100 / 1184, 1.0]
    assert abs(merged.sequences() - 110) < 1e-9  # 1,184 sessions weighed as 100, plus 10
    level = merged.habit_level(0)[()][1]
    expected = own.habit_level(0)[()][1].get("a", 0) + other.habit_level(0)[()][1]["a"] * 100 / 1184
    assert abs(level["a"] - expected) < 1e-9
    # merging the same prior in two halves gives the very same counts
    halves = own.merged(Counts.learn(_random_sessions(2, 1184)[:500], _is_write), weight=100 / 1184) \
                .merged(Counts.learn(_random_sessions(2, 1184)[500:], _is_write), weight=100 / 1184)
    assert halves.to_json() == merged.to_json()


def test_two_learns_of_the_same_sessions_in_any_order_serialize_to_identical_bytes():
    sessions = _random_sessions(3, 40)
    shuffled = list(sessions)
    random.Random(9).shuffle(shuffled)
    one = Counts.learn(sessions, _is_write).to_json()
    two = Counts.learn(shuffled, _is_write).to_json()
    assert one == two
    assert Counts.from_json(one).to_json() == one  # a round trip changes nothing


def test_a_zero_weight_adds_nothing_and_a_negative_one_is_refused():
    counts = Counts.learn(_random_sessions(4, 5), _is_write, weight=0.0)
    assert counts.steps() == 0 and counts.weights == []
    with pytest.raises(ValueError):
        Counts.learn(_random_sessions(4, 5), _is_write, weight=-1.0)


def test_the_vocabulary_must_cover_every_action_seen():
    counts = _two_sessions()
    assert vocabulary(counts, ["w"]) == ["a", "b", "reply", "w"]
    with pytest.raises(ValueError):
        BackoffModel(counts, alpha=1.0, vocab_size=1)


def test_predictions_are_the_same_from_the_cache():
    model = BackoffModel(Counts.learn(_random_sessions(5, 30), _is_write), 1.3, 8)
    first = [model.reach([A, B], "c"), model.habit_of([A, B], "c")]
    assert [model.reach([C, A, B], "c"), model.habit_of([W, A, B], "c")] == first


def test_the_habit_lists_actions_named_at_construction_at_their_backed_off_value():
    counts = _two_sessions()
    model = BackoffModel(counts, alpha=1.0, vocab_size=4, actions=["get_user_details"])
    assert model.habit([A])["get_user_details"] == model.habit_of([A], "never-seen")
