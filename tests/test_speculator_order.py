"""Of the reads that clear θ, the speculator makes first the one the agent would make next."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from test_replay_fakes import MANIFEST, TableFlow
from stretto_core.serve.speculator import Guard, decide
from stretto_core.sessions.state import ToolState


@dataclass
class HabitFlow(TableFlow):
    """A TableFlow whose next step is its own table, apart from the reach."""

    habit: dict[str, float] = field(default_factory=dict)

    def next_step(self, history: list[str]) -> dict[str, float]:
        return self.habit


def _state() -> ToolState:
    state = ToolState(MANIFEST)
    user = {"user_id": "u1", "orders": ["#O1"]}
    state.observe_call("c1", "get_user", {"user_id": "u1"})
    state.observe_result("c1", "get_user", json.dumps(user), user, False)
    return state


def _flow(habit: dict[str, float], reach: dict[str, float]) -> HabitFlow:
    return HabitFlow({"get_user": reach}, {"get_order": ("order_id", "get_user", "$.orders[*]"),
                                           "get_product": ("product_id", "get_user", "$.user_id")},
                     habit=habit)


def test_the_read_the_habit_puts_next_goes_first_even_when_another_scores_higher():
    flow = _flow(habit={"get_product": 0.6, "get_order": 0.1}, reach={"get_order": 0.9, "get_product": 0.5})
    made = decide(flow, Guard(MANIFEST, MANIFEST), _state(), ["get_user/ok/0"], "get_user", theta=0.3)
    assert made is not None and made.tool == "get_product" and made.score == 0.5


def test_a_read_below_the_threshold_is_never_made_first_whatever_the_habit_says():
    flow = _flow(habit={"get_product": 0.9, "get_order": 0.1}, reach={"get_order": 0.9, "get_product": 0.2})
    made = decide(flow, Guard(MANIFEST, MANIFEST), _state(), ["get_user/ok/0"], "get_user", theta=0.3)
    assert made is not None and made.tool == "get_order" and made.score == 0.9
    flow = _flow(habit={"get_product": 0.9}, reach={"get_order": 0.1, "get_product": 0.2})
    assert decide(flow, Guard(MANIFEST, MANIFEST), _state(), ["get_user/ok/0"], "get_user", theta=0.3) is None
