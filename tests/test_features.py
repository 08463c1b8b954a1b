"""Result features: candidates, the filter, selection by grouped cross-validation, and ids."""

from __future__ import annotations

import json
import random
from typing import Any

from stretto_core.learn.features import learn_feature_map, select_features
from stretto_core.learn.result_fields import (MISSING, FeatureMap, ResultField, candidate_fields,
                                             candidate_values)
from stretto_core.sessions.model import LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage
from stretto_core.learn.steps import session_symbols
from stretto_core.sessions.values import TextResult


def _session(sid: str, task: str, steps: list[tuple[str, Any]]) -> Session:
    """A session of one call per turn; a step is (tool, parsed result) or ("reply", None)."""
    events: list[Any] = [UserMessage(text="hi")]
    for i, (tool, result) in enumerate(steps):
        if tool == "reply":
            events += [LLMTurn(text="ok"), UserMessage(text="fine")]
            continue
        cid = f"c{i}"
        events.append(LLMTurn(calls=[ToolCall(call_id=cid, tool=tool)]))
        events.append(ToolResult(call_id=cid, tool=tool, content=json.dumps(result), parsed=result))
    return Session(header=SessionHeader(session_id=sid, harness="test", task_id=task), events=events)


def _shop(n_tasks: int = 20, trials: int = 5, seed: int = 1) -> list[Session]:
    """The order's status decides the next call; its id, the zip and the colour do not."""
    rng = random.Random(seed)
    sessions = []
    for task in range(n_tasks):
        status = "pending" if task % 2 else "delivered"
        zip_code = f"zip{task % 7}"  # constant within a task: it identifies tasks, not actions
        for trial in range(trials):
            order = {"order_id": f"#W{rng.randrange(10**6)}", "status": status,
                     "colour": rng.choice(["red", "green", "blue"]), "user": {"zip": zip_code},
                     "items": [1] * rng.randint(0, 3)}
            after = "cancel_pending_order" if status == "pending" else "return_delivered_order_items"
            steps = [("find_user_id_by_email", {"user_id": f"u{task}"}),
                     ("get_order_details", order), (after, {"ok": True}), ("reply", None)]
            sessions.append(_session(f"t{task}-{trial}", f"task{task}", steps))
    return sessions


def test_candidates_are_top_level_and_one_level_nested_scalars_and_bucketed_list_lengths():
    values = candidate_values({"status": "pending", "total": 3.5, "flag": None,
                               "user": {"zip": "12345", "tags": [1, 2, 3], "deep": {"x": 1}},
                               "items": [], "pay": [{"id": 1}]})
    assert values == {("scalar", ("status",)): "pending", ("scalar", ("total",)): "3.5",
                      ("scalar", ("flag",)): MISSING, ("scalar", ("user", "zip")): "12345",
                      ("len", ("user", "tags")): "2+", ("len", ("items",)): "0",
                      ("len", ("pay",)): "1"}
    assert candidate_values([1, 2]) == {("len", ()): "2+"}
    assert candidate_values(TextResult("plain text")) == {}


def test_the_filter_drops_ids_near_constants_and_fields_that_split_results_alike():
    outputs = [candidate_values({"id": f"#{i}", "status": "a" if i % 2 else "b",
                                 "same_split": "x" if i % 2 else "y",
                                 "rare": "r" if i == 0 else "n"}) for i in range(100)]
    kept = [f.name for f in candidate_fields(outputs)]
    # id: 100 values; rare: `n` in 99% of results; same_split splits exactly as status does
    # (of two fields that split alike the first in name order stays)
    assert kept == ["same_split"]


def test_selection_picks_the_field_that_predicts_the_next_step_and_rejects_id_like_ones():
    selection = select_features(_shop())
    fmap = selection.feature_map
    assert fmap.fields == {"get_order_details": [ResultField(kind="scalar", path=("status",))]}
    assert [c.field.name for c in selection.chosen] == ["status"]
    assert selection.chosen[0].gain > 0.01 * selection.steps
    # ids are given in sorted order of the values
    assert fmap.ids == {"get_order_details": [(("delivered",), 1), (("pending",), 2)]}
    assert fmap.feature_of("get_order_details", {"status": "pending", "order_id": "#W9"}) == 2
    assert fmap.feature_of("get_order_details", {"status": "cancelled"}) == 0  # unseen
    assert fmap.feature_of("get_user_details", {"status": "pending"}) == 0  # not read
    assert fmap.describe("get_order_details", 1) == "status=delivered"


def test_a_field_that_only_identifies_the_task_does_not_help_on_tasks_held_out():
    # the zip decides the next step within a task, but held-out tasks have their own zips
    rng = random.Random(4)
    sessions = []
    for task in range(30):
        after = rng.choice(["cancel_pending_order", "return_delivered_order_items"])
        for trial in range(4):
            steps = [("get_user_details", {"zip": f"z{task}", "kind": rng.choice("pq")}), (after, {}), ("reply", None)]
            sessions.append(_session(f"{task}-{trial}", f"task{task}", steps))
    selection = select_features(sessions, max_values=40)
    assert selection.feature_map.fields == {}


def test_the_feature_map_survives_a_round_trip_and_drives_the_step_symbols():
    sessions = _shop()
    fmap = learn_feature_map(sessions)
    again = FeatureMap.model_validate_json(fmap.model_dump_json())
    assert again.model_dump_json() == fmap.model_dump_json()
    symbols, _ = session_symbols(sessions[1], again)
    assert symbols[1] == "get_order_details/ok/1"  # task 0: delivered
    assert learn_feature_map(sessions).model_dump_json() == fmap.model_dump_json()  # deterministic


def test_selection_stops_at_the_field_limits():
    sessions = _shop()
    assert select_features(sessions, max_fields=0).feature_map.fields == {}
    assert select_features(sessions, min_gain=1e9).feature_map.fields == {}
