"""What every converter shares: unique call ids, results paired to their calls, safe session ids."""

from __future__ import annotations

from stretto_core.sessions.ingest.common import EpisodeBuilder, content_text, make_session_id, usage_of


def test_results_pair_by_id_then_by_order_and_reused_or_missing_ids_become_unique() -> None:
    b = EpisodeBuilder()
    first, second = b.call("get", {"id": 1}, "x"), b.call("get", {"id": 2}, "x")
    bare = b.call("list", None)
    b.turn("", [first, second, bare])
    b.result("x", "one")
    b.result("x", "two")
    b.result(None, "[1]")
    assert [first.call_id, second.call_id, bare.call_id] == ["x", "x~2", "c1"]
    assert [(r.call_id, r.content) for r in b.events[1:]] == [("x", "one"), ("x~2", "two"), ("c1", "[1]")]
    assert b.events[-1].parsed == [1] and b.unanswered() == []
    assert b.result(None, "orphan") is None and b.notes["results without a call dropped"] == 1


def test_long_session_ids_stay_short_unique_and_safe_as_file_names() -> None:
    one = make_session_id("tau2", "telecom", "x" * 300, "a")
    two = make_session_id("tau2", "telecom", "x" * 300, "b")
    assert one != two and len(one) <= 160 and len(two) <= 160
    assert make_session_id("a b", "[c]|d") == "a_b-_c__d"


def test_content_blocks_are_joined_as_the_text_the_model_saw() -> None:
    assert content_text([{"type": "text", "content": "a"}, {"type": "text", "text": "b"}, "c"]) == "a\nb\nc"
    assert content_text(None) == "" and content_text({"k": 1}) == '{"k": 1}'


def test_usage_is_read_from_openai_style_tokens_and_a_cost() -> None:
    usage = usage_of({"prompt_tokens": 10, "completion_tokens": 3}, 0.5)
    assert (usage.input_tokens, usage.output_tokens, usage.cost) == (10, 3, 0.5)
    assert usage_of(None, None) is None
