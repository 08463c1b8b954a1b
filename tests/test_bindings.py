"""Bindings on hand-built sessions: provenance, picking, mentions, sites and ρ."""

from __future__ import annotations

import pytest

from bindings_sessions import SHOP, Script, order_record, user_record, walk_orders
from stretto_core.learn.bindings import (DESCRIBED_READ, MENTIONED, NAMED_OTHER, PLAIN, START_SITE, BindingCounts,
                                         add_session, compile_table, count_bindings, site_name)
from stretto_core.serve.bind import bind
from stretto_core.learn.bindings.compile import CLASS_PRIOR_WEIGHT
from stretto_core.learn.bindings.mention import mention_flags
from stretto_core.learn.bindings.pick import pool_of


def learn(scripts: list[Script], manifest=SHOP, **kw) -> BindingCounts:
    counts = BindingCounts()
    for s in scripts:
        add_session(counts, s.session(), manifest, **kw)
    return counts


def shop_table():
    return compile_table(learn([walk_orders(f"s{i}", f"user_{i}", [f"#W{i}1", f"#W{i}2", f"#W{i}3"]) for i in range(4)]))


def test_an_order_id_binds_from_the_users_order_list_and_skips_orders_already_read():
    table = shop_table()
    assert table.lookups["get_order_details"].args["order_id"].sources == ["get_user_details $.orders[*]"]
    live = Script().user("hello, I am ann@example.com")
    live.call("find_user_id_by_email", {"email": "ann@example.com"}, "ann_1")
    live.call("get_user_details", {"user_id": "ann_1"}, user_record("ann_1", ["#A1", "#A2"]))
    state = live.state(SHOP)
    first = bind(table, "get_order_details", state, site_name("get_user_details"))
    assert first.arguments == {"order_id": "#A1"}
    assert first.sources == ["get_user_details $.orders[*]"]
    live.call("get_order_details", {"order_id": "#A1"}, order_record("#A1", "ann_1", [("Lamp", "1001")]))
    second = bind(table, "get_order_details", live.state(SHOP), site_name("get_order_details"))
    assert second.arguments == {"order_id": "#A2"}  # #A1 was read: the binding moves on


def test_a_user_id_binds_from_the_email_lookup_whose_result_is_plain_text():
    table = shop_table()
    assert table.lookups["get_user_details"].args["user_id"].sources == ["find_user_id_by_email $"]
    live = Script().user("ann@example.com").call("find_user_id_by_email", {"email": "ann@example.com"}, "ann_1")
    binding = bind(table, "get_user_details", live.state(SHOP), site_name("find_user_id_by_email"))
    assert binding.arguments == {"user_id": "ann_1"}
    assert binding.rho > 0.8  # every training call took exactly this value


def test_no_binding_when_every_order_was_read_or_the_source_tool_never_returned():
    table = shop_table()
    assert bind(table, "get_order_details", Script().user("hi").state(SHOP), START_SITE) is None
    live = Script().call("get_user_details", {"user_id": "u"}, user_record("u", ["#A1"]))
    live.call("get_order_details", {"order_id": "#A1"}, order_record("#A1", "u", []))
    assert bind(table, "get_order_details", live.state(SHOP), site_name("get_order_details")) is None


def test_a_lookup_in_flight_in_the_same_turn_is_not_bound_again():
    table = shop_table()
    live = Script().call("get_user_details", {"user_id": "u"}, user_record("u", ["#A1"]))
    state = live.state(SHOP)
    state.observe_call("c99", "get_order_details", {"order_id": "#A1"})  # the agent's call, no result yet
    assert bind(table, "get_order_details", state, site_name("get_user_details")) is None


def test_a_lookup_stretto_already_made_counts_as_made_and_its_result_is_a_source():
    table = shop_table()
    live = Script().call("get_user_details", {"user_id": "u"}, user_record("u", ["#A1", "#A2"]))
    state = live.state(SHOP)
    state.observe_lookup("stretto-1", "get_order_details", {"order_id": "#A1"},
                         '{"order_id": "#A1", "items": [{"product_id": "1001"}]}')
    assert bind(table, "get_order_details", state, site_name("get_order_details")).arguments == {"order_id": "#A2"}
    assert state.newest_ok["get_order_details"].origin == "lookup"


def test_the_order_the_user_named_is_picked_before_the_first_open_one():
    table = shop_table()
    live = Script().user("I want to cancel order #A2 please")
    live.call("get_user_details", {"user_id": "u"}, user_record("u", ["#A1", "#A2", "#A3"]))
    binding = bind(table, "get_order_details", live.state(SHOP), site_name("get_user_details"))
    assert binding.arguments == {"order_id": "#A2"}
    assert binding.mention == MENTIONED


def test_a_product_the_user_described_by_name_is_picked_from_an_order_read_before_the_newest():
    # The customer names the item; the agent reads every order to find it, then the product.
    orders = {"#A1": [("Water Bottle", "2001"), ("Desk Lamp", "2002")], "#A2": [("Garden Hose", "2003")]}
    live = Script().user("my water bottle leaks, I want to exchange it")
    live.call("get_user_details", {"user_id": "u"}, user_record("u", list(orders)))
    for order, items in orders.items():
        live.call("get_order_details", {"order_id": order}, order_record(order, "u", items))
    training = []
    for i in range(3):
        s = Script(f"t{i}").user("my water bottle leaks")
        s.call("get_user_details", {"user_id": "u"}, user_record("u", list(orders)))
        for order, items in orders.items():
            s.call("get_order_details", {"order_id": order}, order_record(order, "u", items))
        s.call("get_product_details", {"product_id": "2001"}, {"product_id": "2001", "name": "Water Bottle"})
        training.append(s)
    table = compile_table(learn(training))
    binding = bind(table, "get_product_details", live.state(SHOP), site_name("get_order_details"))
    assert binding.arguments == {"product_id": "2001"}  # not the hose of the newest order
    assert binding.mention == MENTIONED


def test_a_word_every_record_shares_names_none_of_them():
    items = [("Black Lamp", "3001"), ("Black Desk", "3002")]
    live = Script().user("the black one broke")
    live.call("get_order_details", {"order_id": "#A1"},
              {"order_id": "#A1", "items": [{"name": n, "color": "black", "product_id": p} for n, p in items]})
    state = live.state(SHOP)
    flags = mention_flags(state, pool_of(state, "get_order_details")[0], "$.items[*].product_id")
    assert flags == [False, False]  # "black" is in both records, so it tells them apart not at all


def test_named_other_lowers_rho_below_a_plain_pick():
    # Plain sessions: the agent reads every order, so a plain pick is its own call.
    sessions = [walk_orders(f"p{i}", f"u{i}", [f"#P{i}1", f"#P{i}2"]) for i in range(6)]
    # Named sessions: the user names one order; the agent reads it, cancels it and reads it again:
    # the binding would offer the other order (named_other), which the agent never reads.
    for i in range(6):
        s = Script(f"n{i}").user(f"cancel order #N{i}2")
        s.call("get_user_details", {"user_id": f"v{i}"}, user_record(f"v{i}", [f"#N{i}1", f"#N{i}2"]))
        s.call("get_order_details", {"order_id": f"#N{i}2"}, order_record(f"#N{i}2", f"v{i}", []))
        s.call("cancel_pending_order", {"order_id": f"#N{i}2"}, {"ok": True})
        s.call("get_order_details", {"order_id": f"#N{i}2"}, order_record(f"#N{i}2", f"v{i}", [], "cancelled"))
        sessions.append(s)
    rho = compile_table(learn(sessions)).lookups["get_order_details"].args["order_id"].rho["*"]
    assert rho[NAMED_OTHER] < 0.5 < rho[PLAIN]
    assert rho[MENTIONED] > 0.5


def test_a_record_already_read_that_held_what_the_user_gave_makes_the_next_pick_described_read():
    live = Script().user("my package with tracking number 4455667788 never arrived")
    live.call("get_user_details", {"user_id": "u"}, user_record("u", ["#A1", "#A2"]))
    live.call("get_order_details", {"order_id": "#A1"},
              order_record("#A1", "u", [("Lamp", "1001")], tracking="4455667788"))
    table = compile_table(learn([walk_orders("w", "u", ["#B1", "#B2"])]))
    binding = bind(table, "get_order_details", live.state(SHOP), site_name("get_order_details"))
    assert binding.arguments == {"order_id": "#A2"}
    assert binding.mention == DESCRIBED_READ  # the order the user described was #A1, already read


def test_rho_of_a_single_source_is_its_agreement_shrunk_towards_the_pooled_rate():
    counts = learn([walk_orders(f"s{i}", f"u{i}", [f"#W{i}1", f"#W{i}2"]) for i in range(3)])
    at = compile_table(counts).lookups["get_order_details"].args["order_id"]
    k, n = at.support[PLAIN]
    assert (k, n) == (6.0, 6.0)  # six reads, each the first open order of the list
    pooled = (6 + 1) / (6 + 2)
    assert at.rho["*"][PLAIN] == pytest.approx((k + CLASS_PRIOR_WEIGHT * pooled) / (n + CLASS_PRIOR_WEIGHT))
    assert at.rho["*"][NAMED_OTHER] == pytest.approx(pooled)  # no evidence: the pooled rate


def test_each_read_of_a_parallel_batch_counts_at_the_site_of_the_read_before_it():
    s = Script().call("get_user_details", {"user_id": "u"}, user_record("u", ["#A1", "#A2"]))
    s.batch([("get_order_details", {"order_id": "#A1"}, order_record("#A1", "u", [])),
             ("get_order_details", {"order_id": "#A2"}, order_record("#A2", "u", []))])
    arg = count_bindings(s.session(), SHOP).lookups["get_order_details"].args["order_id"]
    assert arg.site_found == {"get_user_details": {"get_user_details $.orders[*]": 1.0},
                              "get_order_details": {"get_user_details $.orders[*]": 1.0}}
    # The second call was evaluated with the first in flight: its pick was #A2, the agent's own.
    assert arg.evidence["free"][PLAIN]["get_user_details $.orders[*]"] == [2.0, 2.0]


def test_a_site_with_enough_traced_values_tries_its_own_source_first():
    sessions = []
    for i in range(6):  # after a user lookup the agent reads from the user's list ...
        s = Script(f"a{i}").call("get_user_details", {"user_id": f"u{i}"}, user_record(f"u{i}", [f"#A{i}"]))
        s.call("get_order_details", {"order_id": f"#A{i}"}, order_record(f"#A{i}", f"u{i}", []))
        sessions.append(s)
    for i in range(7):  # ... but after a search, from the search's hits, and more often overall
        s = Script(f"b{i}").call("search_orders", {"query": "lamp"}, {"hits": [f"#B{i}"]})
        s.call("get_order_details", {"order_id": f"#B{i}"}, order_record(f"#B{i}", "x", []))
        sessions.append(s)
    at = compile_table(learn(sessions)).lookups["get_order_details"].args["order_id"]
    assert at.sources == ["search_orders $.hits[*]", "get_user_details $.orders[*]"]
    # Each site tries only the sources the agent took from there.
    assert at.site_orders == {"get_user_details": ["get_user_details $.orders[*]"],
                              "search_orders": ["search_orders $.hits[*]"]}
    table = compile_table(learn(sessions))
    live = Script().call("search_orders", {"query": "x"}, {"hits": ["#S1"]})
    live.call("get_user_details", {"user_id": "z"}, user_record("z", ["#Z1"]))
    assert bind(table, "get_order_details", live.state(SHOP), "get_user_details").arguments == {"order_id": "#Z1"}
    assert bind(table, "get_order_details", live.state(SHOP), "elsewhere").arguments == {"order_id": "#S1"}


def test_a_value_found_only_in_a_failed_result_is_not_traced():
    s = Script().call("get_user_details", {"user_id": "u"}, "Error: #A1 not found", error=True)
    s.call("get_order_details", {"order_id": "#A1"}, order_record("#A1", "u", []))
    arg = count_bindings(s.session(), SHOP).lookups["get_order_details"].args["order_id"]
    assert arg.values == 1.0 and arg.found == {}


def test_rho_is_lowered_at_a_site_where_the_agent_took_its_values_from_elsewhere():
    sessions = []
    for i in range(12):  # after a user lookup the agent reads an order of the user's list ...
        s = Script(f"a{i}").call("get_user_details", {"user_id": f"u{i}"}, user_record(f"u{i}", [f"#A{i}"]))
        s.call("get_order_details", {"order_id": f"#A{i}"}, order_record(f"#A{i}", f"u{i}", []))
        sessions.append(s)
    # ... but once, after a search, the order a search hit named (too rare to be a source)
    s = Script("b").call("get_user_details", {"user_id": "v"}, user_record("v", ["#C1"]))
    s.call("search_orders", {"query": "lamp"}, {"hits": ["#B1"]})
    s.call("get_order_details", {"order_id": "#B1"}, order_record("#B1", "x", []))
    table = compile_table(learn([*sessions, s]))
    at = table.lookups["get_order_details"].args["order_id"]
    assert at.sources == ["get_user_details $.orders[*]"]
    share = 12 / 13  # of the values traced anywhere, those traced to the user's list
    assert at.site_factor == {"search_orders": pytest.approx((0 + 2 * share) / (1 + 2) / share)}
    live = Script().call("get_user_details", {"user_id": "z"}, user_record("z", ["#Z1"]))
    live.call("search_orders", {"query": "x"}, {"hits": []})
    here, there = (bind(table, "get_order_details", live.state(SHOP), site) for site in ("get_user_details", "search_orders"))
    assert here.arguments == there.arguments == {"order_id": "#Z1"}
    assert there.rho == pytest.approx(here.rho * 2 / 3) and there.rho < here.rho
