"""Any tool result at all, through serving and through learning: bounded work, nothing raised.

Results are generated as JSON, YAML (dates, anchors and aliases), Python literals and text, and
as the shapes that broke stretto before: nested thousands deep, aliased into millions of lists,
hundreds of thousands of characters, binary. Work is bounded by counting Python calls (a result
that needs more than the budget fails the test at once); no wall-clock time is asserted.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shop_sessions import MANIFEST, shop_flow, shop_sessions
from test_untrusted_results import alias_bomb, calls_made
from stretto_core.flow.ir import learn
from stretto_core.serve.engine import Engine, EngineConfig
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import (LLMTurn, Session, SessionHeader, ToolCall, ToolResult, UserMessage,
                                         parse_json_content)
from stretto_core.sessions.recorder import SessionRecorder
from stretto_core.sessions.store import read_session

SERVE_BUDGET = 1_500_000
"""Python calls one served session (two results, their lookups) may cost."""

LEARN_BUDGET = 4_000_000
"""Python calls learning from three sessions carrying the result may cost."""

FUZZ = settings(max_examples=60, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=False),
                    st.text(max_size=12), st.sampled_from(["u123", "#W1", "ann@example.com", "P001"]))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)), max_leaves=40)
py_values = st.recursive(st.one_of(scalars, st.binary(max_size=8), st.complex_numbers(allow_nan=False)),
                         lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                                                 st.frozensets(st.integers(0, 9), max_size=3),
                                                 st.dictionaries(st.integers(0, 9) | st.text(max_size=4), inner,
                                                                 max_size=4)), max_leaves=30)
yaml_values = st.recursive(st.one_of(scalars, st.dates(), st.datetimes()), lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text("abcdef", min_size=1, max_size=6), inner, max_size=4)),
    max_leaves=30)


@st.composite
def aliased(draw: Any) -> str:
    """YAML whose anchors are reused: a bomb of empty lists, of values, or of mappings (merge keys)."""
    levels, width = draw(st.integers(2, 9)), draw(st.integers(2, 9))
    kind = draw(st.sampled_from(["empty", "values", "merge"]))
    bomb = alias_bomb(levels, width)
    if kind == "values":
        bomb = "v: &v [u123, '#W1', 3]\n" + bomb.replace("[]", "*v")
    elif kind == "merge":
        bomb = "base: &b {user_id: u123, order: '#W1'}\n" + "".join(
            f"m{i}: &m{i}\n  <<: *{'b' if i == 0 else f'm{i - 1}'}\n  k{i}: {i}\n" for i in range(levels))
    return bomb


@st.composite
def deep(draw: Any) -> str:
    depth = draw(st.sampled_from([60, 70, 200, 999, 1500, 50_000]))
    opening, closing = draw(st.sampled_from([("[", "]"), ('{"a": ', "}"), ("(", ")"), ("- ", ""), ("a:\n  ", "")]))
    core = draw(st.sampled_from(["1", "'u123'", "[]", ""]))
    return opening * depth + core + closing * depth


results = st.one_of(
    json_values.map(json.dumps),
    py_values.map(repr),
    yaml_values.map(lambda v: yaml.safe_dump(v, allow_unicode=True)),
    aliased(),
    deep(),
    st.binary(max_size=2000).map(lambda b: b.decode("utf-8", errors="replace")),
    st.binary(max_size=2000).map(lambda b: b.decode("latin-1")),
    st.text(max_size=300),
    st.lists(st.tuples(st.text("abcdefgh ", min_size=1, max_size=10), st.text(max_size=20)), max_size=30).map(
        lambda pairs: "\n".join(f"{k}: {v}" for k, v in pairs)),
    st.sampled_from(["x" * 300_000, json.dumps(list(range(40_000))), "\n".join(["a: b"] * 20_000),
                     json.dumps({f"k{i}": [] for i in range(30_000)}), "[" + "[]," * 60_000 + "[]]",
                     "<<" + json.dumps({"user_id": "u123"}) + ">>", "\x00" * 10_000]),
)

_FLOW = shop_flow()
_GOOD = shop_sessions(24)[20:]


def serve_with(text: str) -> int:
    """A session where the fuzzed text is a result and every lookup's result; lookups made."""
    es = Engine(FlowRuntime(_FLOW), EngineConfig(theta=0.0)).session(live_manifest=MANIFEST)
    made = 0
    events = [UserMessage(text="Hi, I am ann@example.com, about order #W1"),
              LLMTurn(calls=[ToolCall(call_id="c1", tool="find_user_id_by_email",
                                      arguments={"email": "ann@example.com"})]),
              ToolResult(call_id="c1", tool="find_user_id_by_email", content=text, parsed=parse_json_content(text)),
              LLMTurn(calls=[ToolCall(call_id="c2", tool="get_user_details", arguments={"user_id": "u123"})]),
              ToolResult(call_id="c2", tool="get_user_details",
                         content=json.dumps({"user_id": "u123", "orders": ["#W1", "#W2"]}))]
    for event in events:
        es.observe(event)
        if isinstance(event, ToolResult):
            made += len(es.run_lookups(event.call_id, lambda tool, args: text))
    assert not es.broken, "the session was read within its bounds"
    return made


@FUZZ
@given(text=results)
def test_any_result_is_served_in_bounded_work_and_raises_nothing(text: str) -> None:
    made: list[int] = []
    calls_made(lambda: made.append(serve_with(text)), budget=SERVE_BUDGET)
    assert made[0] > 0, "lookups were made with the result in the state (the case is not vacuous)"


def session_with(text: str, n: int) -> Session:
    base = _GOOD[n % len(_GOOD)]
    events: list[Any] = []
    for event in base.events:
        if isinstance(event, ToolResult) and event.tool in ("get_user_details", "get_order_details"):
            event = event.model_copy(update={"content": text, "parsed": parse_json_content(text)})
        events.append(event)
    return Session(header=SessionHeader(session_id=f"fuzz-{n}", harness="test", manifest=MANIFEST), events=events)


@FUZZ
@given(text=results)
def test_any_result_is_learned_from_in_bounded_work_and_raises_nothing(text: str) -> None:
    sessions = [session_with(text, n) for n in range(3)]
    flows: list[Any] = []
    calls_made(lambda: flows.append(learn(sessions, MANIFEST)), budget=LEARN_BUDGET)
    assert flows[0].to_json()


@settings(max_examples=30, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=results)
def test_any_result_is_recorded_and_read_back_without_raising(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        with SessionRecorder(folder, SessionHeader(session_id="fuzz", harness="test")) as rec:
            rec.llm_turn(calls=[ToolCall(call_id="c1", tool="get_user_details", arguments={"user_id": "u123"})])
            rec.tool_result("c1", "get_user_details", text)
        [result] = [e for e in read_session(Path(folder) / "fuzz.jsonl").events if isinstance(e, ToolResult)]
        assert result.content == text
