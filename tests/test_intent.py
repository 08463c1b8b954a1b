"""The reach held back by the user's words: counted from sessions, derived, served, and private."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bindings_sessions import SHOP, Script, user_record
from shared_data import full_data

from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.evaluate.scripted.episodes import load_episodes
from stretto_core.flow.ir import learn, merge
from stretto_core.learn.intent import IntentCounts, count_sessions, derive_table, said_words
from stretto_core.learn.intent import IntentTable
from stretto_core.serve.intent import IntentLifts, rule_lift
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import UserMessage
from stretto_core.sessions.state import ToolState

ORDER = {"order_id": "#W1", "status": "delivered", "items": [{"item_id": "i1", "product_id": "p1"}]}


def _session(n: int, wants: str):
    """A customer who wants an exchange (the agent reads the product) or a return (it does not)."""
    words = {"exchange": "i would like to exchange my lamp for another color",
             "return": "i would like to return my lamp please"}[wants]
    script = (Script(f"{wants}-{n}").user(f"hi, {words}")
              .call("get_user_details", {"user_id": "u1"}, user_record("u1", ["#W1"]))
              .call("get_order_details", {"order_id": "#W1"}, ORDER))
    if wants == "exchange":
        script.call("get_product_details", {"product_id": "p1"}, {"product_id": "p1", "variants": {}})
    return script.call("cancel_pending_order", {"order_id": "#W1"}, {"ok": True}).reply()


def _sessions(count: int = 40):
    return [_session(i, "exchange" if i % 2 else "return") for i in range(count)]


def _state(words: str | None) -> ToolState:
    state = ToolState(SHOP)
    if words is not None:
        state.observe_user_message(UserMessage(text=words))
    return state


def test_a_read_the_words_say_will_not_be_used_is_held_back_and_one_they_vouch_for_is_not():
    table = derive_table(count_sessions([s.session() for s in _sessions()], SHOP))
    rule = table.rules["get_order_details"]["get_product_details"]
    assert "exchange" in rule.vouch
    assert rule.said.get("return", 1.0) < 0.7 or rule.unsaid.get("exchange", 1.0) < 0.7
    lifts = IntentLifts(table)
    assert lifts.lift("get_product_details", _state("i want to return it"), "get_order_details") < 0.7
    assert lifts.lift("get_product_details", _state("i want to exchange it"), "get_order_details") == 1.0


def test_with_no_user_words_seen_the_reach_is_served_as_counted():
    """A proxy sees no user words: the lift is 1 and the runtime's reach is the counts' own."""
    flow = learn([s.session() for s in _sessions()], SHOP)
    runtime = FlowRuntime(flow)
    history = ["get_order_details/ok/0", "get_order_details/ok/0"]
    counted = runtime.model.reach(history, "get_product_details")
    assert runtime.reach_given(history, "get_product_details", _state(None), "get_order_details") == counted
    held = runtime.reach_given(history, "get_product_details", _state("return it please"), "get_order_details")
    assert held < counted
    assert FlowRuntime(flow, intent=False).reach_given(history, "get_product_details", _state("return it please"),
                                                     "get_order_details") == counted


def test_too_few_sessions_keep_no_word():
    table = derive_table(count_sessions([s.session() for s in _sessions(6)], SHOP))
    assert table.rules == {}


def test_only_words_written_in_lower_case_are_counted_never_names_numbers_or_emails():
    assert said_words("Hi, I'm Yusuf Rossi at yusuf@example.com, zip 85034, order #W2378156 please") == {"zip", "order", "please"}


def test_counts_of_two_halves_add_up_to_the_counts_at_once():
    sessions = [s.session() for s in _sessions()]
    at_once = count_sessions(sessions, SHOP)
    halves = count_sessions(sessions[:15], SHOP).merged(count_sessions(sessions[15:], SHOP))
    assert halves == at_once
    merged = merge(learn(sessions[:15], SHOP), learn(sessions[15:], SHOP))
    assert merged.intent_table == learn(sessions, SHOP).intent_table


def test_a_rule_vouched_for_is_never_held_back_whatever_else_was_said():
    from stretto_core.learn.intent import IntentRule

    rule = IntentRule(vouch=["exchange"], said={"return": 0.4}, unsaid={"price": 0.6})
    assert rule_lift(rule, said_words("return one, exchange the other")) == 1.0
    assert rule_lift(rule, said_words("return it")) == 0.4
    assert rule_lift(rule, said_words("what is the status")) == 0.6
    assert rule_lift(rule, said_words("the price, then return it")) == 0.4


def test_a_served_session_hears_a_word_only_as_the_learner_counted_it():
    """Learning never counted "Return" opening a sentence, nor "return-policy": serving must not
    hear them either, and a word said early is still heard when the kept text has forgotten it."""
    from stretto_core.learn.intent import IntentRule
    from stretto_core.sessions.state import ToolState

    rule = IntentRule(said={"return": 0.4})
    lifts = IntentLifts(IntentTable(rules={"get_order": {"get_product": rule}}))
    assert lifts.words == {"return"}

    def lift_after(*messages: str) -> float:
        state = ToolState(SHOP, served=True, watched_words=lifts.words)
        for text in messages:
            state.observe_user(text)
        return lifts.lift("get_product", state, "get_order")

    assert lift_after("Return the lamp.") == 1.0
    assert lift_after("what is the return-policy?") == 1.0
    assert lift_after("I'd like to return the lamp.") == 0.4
    assert lift_after("please return it", "x" * 40_000, "thanks") == 0.4


def test_an_empty_count_derives_an_empty_table():
    assert derive_table(IntentCounts()).rules == {}


@full_data
def test_retails_flow_holds_product_lookups_back_for_a_return_and_a_proxy_replays_it_as_counted():
    """Learned from the train split, the rule removes detours in the agent's view and no saved
    turn; in a proxy's view, which sees no user words, the replay is the one without the rule.

    Learned from ToolOrchestra's gpt-4.1-mini, named: the train split's other agent (gpt-4o) says
    the same of returns more weakly (product lookups after an order: 21% of decisions with
    "return" said against 44%, gpt-4.1-mini 15% against 51%), and pooled the two fall short of the
    rule's bar (7.0 deviations where the design effect of two sessions per task asks 7.3)."""
    flow = learn([s for s in load_episodes("tau2/retail", split="train", full=True)
                  if s.header.agent_model == "gpt-4.1-mini-2025-04-14"])
    assert "return" in flow.intent_table.rules["get_order_details"]["get_product_details"].said
    # the test agents it was measured on; on gpt-4o's 40 test sessions it removes 3 detours (26 -> 23) and
    # costs one saved turn (120 -> 119), so its "no saved turn" is a claim about these two agents
    test = [s for s in load_episodes("tau2/retail", split="test", full=True)
            if s.header.agent_model in ("gpt-4.1-mini-2025-04-14", "gpt-4.1")]

    def replay(intent: bool, view: str):
        return replay_sessions(FlowRuntime(flow, intent=intent), test, ReplayOptions(view=view, processes=1))

    words, counted = replay(True, "agent"), replay(False, "agent")
    assert words.detours < counted.detours and words.turns_saved == counted.turns_saved
    proxy_words, proxy_counted = replay(True, "proxy"), replay(False, "proxy")
    assert proxy_words.lookups > 0
    assert [r.model_dump() for r in proxy_words.lookup_rows] == [r.model_dump() for r in proxy_counted.lookup_rows]


def _words_by_splitting(text: str) -> set[str]:
    """The rule as first written, the oracle: split on whitespace, strip the edges, judge each."""
    from stretto_core.sessions.said_words import EDGES, MAX_LETTERS, MIN_LETTERS

    out = set()
    for token in text.split():
        word = token.strip(EDGES)
        if MIN_LETTERS <= len(word) <= MAX_LETTERS and word.isalpha() and word.islower():
            out.add(word)
    return out


_TEXT_CHARS = "abcxyzAZéßǅΩω" + "0129²_@#-/" + "\"'.,;:!?()[]{}<>*`" + " \t\n\u00a0\u2003\x1c"
_EDGE_CHARS = "\"'.,;:!?()[]{}<>*`"
_WORDISH = st.builds(lambda a, w, b: a + w + b, st.text(alphabet=_EDGE_CHARS, max_size=2),
                     st.text(alphabet="abczéßωAǅ2", min_size=2, max_size=22), st.text(alphabet=_EDGE_CHARS, max_size=2))
"""A token near the rule's edge: letters (some capital, some not letters) between edge punctuation."""


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_WORDISH, st.text(alphabet=_TEXT_CHARS, max_size=26)), max_size=12))
def test_the_words_found_by_one_pattern_are_the_words_found_by_splitting(tokens) -> None:
    text = " ".join(tokens)
    assert said_words(text) == _words_by_splitting(text)
    _FOUND.append(bool(_words_by_splitting(text)))


_FOUND: list[bool] = []


def test_the_pattern_property_saw_texts_with_words_and_without() -> None:
    if not _FOUND:  # run alone: exercise it here
        test_the_words_found_by_one_pattern_are_the_words_found_by_splitting()
    assert any(_FOUND) and not all(_FOUND)


def test_both_tests_of_a_word_from_one_deviation_are_the_two_tests_made_apart() -> None:
    from stretto_core.learn.intent import _telling_lift, _telling_lifts

    kinds = {"none": 0, "one": 0, "both": 0}

    @settings(max_examples=400, deadline=None)
    @given(st.integers(0, 60), st.integers(-1, 80), st.floats(0.01, 0.99), st.floats(0.5, 4.0), st.floats(0.5, 4.0))
    def check(k: int, n: int, p: float, z: float, z_more: float) -> None:
        k = min(k, max(n, 0))
        got = _telling_lifts(float(k), float(n), p, z, z_more)
        assert got == (_telling_lift(float(k), float(n), p, z), _telling_lift(float(k), float(n), p, z_more))
        kinds["none" if got == (None, None) else "both" if None not in got else "one"] += 1

    check()
    assert min(kinds.values()) >= 5, kinds  # lifts found at neither, one and both thresholds
