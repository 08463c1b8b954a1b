"""Bindings of other shapes (lists, bare lookups, constants, records of several arguments), the
exactness of merging counts, and one check on τ²-bench retail's published runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bindings_sessions import AIRLINE, SHOP, TRAVEL, Script, user_record, walk_orders
from shared_data import full_data
from stretto_core.learn.bindings import (BindingCounts, BindingTable, add_session, compile_table, describe_table,
                                         site_name)
from stretto_core.serve.bind import CONSTANT_SOURCE, bind
from stretto_core.sessions.values import index_result


def learn(scripts, manifest=SHOP, **kw) -> BindingCounts:
    counts = BindingCounts()
    for s in scripts:
        add_session(counts, s.session(), manifest, **kw)
    return counts


# ---------------------------------------------------------------- lists

LONDON = "Hotel Names: Cozy Stay\nMom's Home\nLondon Luxury\n"
PARIS = "Hotel Names: Le Marais Boutique\nGood Night\n"


def test_a_heading_list_text_is_read_as_its_items_at_one_path():
    index = index_result(LONDON)
    assert index.by_path["$[*]"] == ["Cozy Stay", "Mom's Home", "London Luxury"]
    assert index.first_path["cozy stay"] == "$[*]"  # the first item too, not only `$.Hotel Names`
    assert index.by_path["$.Hotel Names"] == ["Cozy Stay"]  # the older path is still there


def travel_session(name: str, city: str, listing: str, hotels: list[str]) -> Script:
    s = Script(name).user(f"find me a hotel in {city}")
    s.call("get_all_hotels_in_city", {"city": city}, listing)
    s.call("get_hotels_prices", {"hotel_names": hotels}, {h: "Price range: 100.0 - 180.0" for h in hotels})
    return s.reply()


def test_a_list_argument_binds_every_hotel_of_the_city_listing_once():
    table = compile_table(learn([travel_session("a", "London", LONDON, ["Cozy Stay", "Mom's Home", "London Luxury"]),
                   travel_session("b", "Paris", PARIS, ["Le Marais Boutique", "Good Night"])],
                  TRAVEL))
    at = table.lookups["get_hotels_prices"].args["hotel_names"]
    assert at.mode == "list" and at.sources == ["get_all_hotels_in_city $[*]"]
    live = Script().user("hotels in Paris?").call("get_all_hotels_in_city", {"city": "Paris"}, PARIS)
    binding = bind(table, "get_hotels_prices", live.state(TRAVEL), site_name("get_all_hotels_in_city"))
    assert binding.arguments == {"hotel_names": ["Le Marais Boutique", "Good Night"]}
    assert binding.rho > 0.6
    live.call("get_hotels_prices", {"hotel_names": ["Good Night", "Le Marais Boutique"]}, {})
    assert bind(table, "get_hotels_prices", live.state(TRAVEL), site_name("get_hotels_prices")) is None


def test_a_list_pick_agrees_only_when_the_sets_are_equal():
    subset = travel_session("c", "London", LONDON, ["Cozy Stay"])  # the agent priced one hotel
    whole = travel_session("d", "Paris", PARIS, ["Good Night", "Le Marais Boutique"])
    evidence = learn([subset, whole], TRAVEL).lookups["get_hotels_prices"].args["hotel_names"].list_evidence
    assert evidence["get_all_hotels_in_city $[*]"] == [2.0, 1.0]


# ---------------------------------------------------------------- bare lookups

def test_a_read_always_called_without_arguments_is_made_bare_once_per_session_with_rho_one():
    sessions = [Script(f"b{i}").call("list_all_product_types", {}, {"Lamp": "1001"}) for i in range(3)]
    table = compile_table(learn(sessions))
    lookup = table.lookups["list_all_product_types"]
    assert lookup.kind == "bare" and lookup.bare_rho == 1.0
    live = Script().user("what do you sell?")
    binding = bind(table, "list_all_product_types", live.state(SHOP), "start")
    assert binding.arguments == {} and binding.rho == 1.0
    live.call("list_all_product_types", {}, {"Lamp": "1001"})
    assert bind(table, "list_all_product_types", live.state(SHOP), "list_all_product_types") is None


def test_a_search_the_agent_always_narrows_is_bare_with_a_chance_near_zero():
    sessions = []
    for i in range(10):  # one of several optional filters each time: no argument is required
        args = [{"status": "pending"}, {"query": "lamp"}, {"since": "2024-05-01"}][i % 3]
        sessions.append(Script(f"s{i}").call("search_orders", args, {"hits": []}))
    lookup = compile_table(learn(sessions)).lookups["search_orders"]
    assert lookup.kind == "bare" and lookup.required == []
    assert lookup.bare_rho == pytest.approx(1 / 12)


# ---------------------------------------------------------------- constants

def paged(name: str, block: str, page_size=100, user_words: str = "show me the page") -> Script:
    s = Script(name).user(user_words)
    s.call("list_blocks", {}, {"results": [block]})
    s.call("get_block", {"block_id": block, "page_size": page_size}, {"id": block, "text": "hello"})
    return s


def test_a_page_size_passed_in_every_call_is_learned_as_a_constant_only_when_asked():
    sessions = [paged(f"p{i}", f"blk-{i}") for i in range(5)]
    plain = compile_table(learn(sessions))
    # Without the option the page size traces to no result, so the lookup cannot be made (App. D).
    assert plain.lookups["get_block"].kind == "unbound"
    assert plain.lookups["get_block"].reason == "no source for page_size"
    table = compile_table(learn(sessions, constants=True))
    assert table.lookups["get_block"].args["page_size"].mode == "constant"
    live = Script().user("open it").call("list_blocks", {}, {"results": ["blk-9"]})
    binding = bind(table, "get_block", live.state(SHOP), site_name("list_blocks"))
    assert binding.arguments == {"block_id": "blk-9", "page_size": 100}
    assert binding.sources == ["list_blocks $.results[*]", CONSTANT_SOURCE]


def test_a_constant_needs_five_calls_and_one_value():
    four = compile_table(learn([paged(f"p{i}", f"b{i}") for i in range(4)], constants=True)).lookups["get_block"]
    assert four.kind == "unbound" and four.args["page_size"].mode == "value"
    varied = [paged(f"p{i}", f"b{i}", page_size=100 if i else 50) for i in range(6)]
    assert learn(varied, constants=True).lookups["get_block"].args["page_size"].varied
    assert compile_table(learn(varied, constants=True)).lookups["get_block"].kind == "unbound"


def test_an_id_the_user_wrote_is_never_a_constant_however_many_sessions_shared_it():
    sessions = []
    for i in range(6):
        s = Script(f"u{i}").user("I am user_4242, open my block")
        s.call("list_blocks", {}, {"results": [f"b{i}"]})
        s.call("get_block", {"block_id": f"b{i}", "owner": "user_4242"}, {"id": f"b{i}"})
        sessions.append(s)
    counts = learn(sessions, constants=True)
    assert counts.lookups["get_block"].args["owner"].user_wrote
    lookup = compile_table(counts).lookups["get_block"]
    assert lookup.kind == "unbound" and lookup.args["owner"].mode == "value"


def test_a_value_an_earlier_result_held_is_never_a_constant():
    sessions = []
    for i in range(6):
        s = Script(f"r{i}").call("list_blocks", {}, {"results": [f"b{i}"], "workspace": "ws-main"})
        s.call("get_block", {"block_id": f"b{i}", "workspace": "ws-main"}, {"id": f"b{i}"})
        sessions.append(s)
    counts = learn(sessions, constants=True)
    assert counts.lookups["get_block"].args["workspace"].found_in_result == 6.0
    assert compile_table(counts).lookups["get_block"].args["workspace"].mode == "value"  # bound, not constant


# ---------------------------------------------------------------- several arguments

def reservation(rid: str, flights: list[tuple[str, str]]) -> dict:
    return {"reservation_id": rid, "flights": [{"flight_number": f, "date": d, "origin": "JFK"} for f, d in flights]}


def test_get_flight_status_takes_the_date_of_the_flight_it_took():
    legs = [("HAT001", "2024-05-15"), ("HAT002", "2024-05-15"), ("HAT003", "2024-05-20")]
    sessions = []
    for i in range(4):
        s = Script(f"f{i}").call("get_reservation_details", {"reservation_id": f"R{i}"}, reservation(f"R{i}", legs))
        for flight, date in legs:
            s.call("get_flight_status", {"flight_number": flight, "date": date}, "on time")
        sessions.append(s)
    table = compile_table(learn(sessions, AIRLINE))
    assert table.lookups["get_flight_status"].lead == "flight_number"
    live = Script().call("get_reservation_details", {"reservation_id": "RX"}, reservation("RX", legs))
    live.call("get_flight_status", {"flight_number": "HAT001", "date": "2024-05-15"}, "on time")
    binding = bind(table, "get_flight_status", live.state(AIRLINE), site_name("get_flight_status"))
    # The date already passed is still the second flight's: an unaligned pick would take 05-20.
    assert binding.arguments == {"flight_number": "HAT002", "date": "2024-05-15"}
    assert binding.rho > 0.7


# ---------------------------------------------------------------- merge exactness

def mixed_sessions() -> list[Script]:
    out = [walk_orders(f"w{i}", f"u{i}", [f"#W{i}{j}" for j in range(i % 3 + 1)]) for i in range(6)]
    out += [travel_session("t", "London", LONDON, ["Cozy Stay", "Mom's Home", "London Luxury"])]
    named = Script("n").user("cancel #N2").call("get_user_details", {"user_id": "v"}, user_record("v", ["#N1", "#N2"]))
    named.call("get_order_details", {"order_id": "#N2"}, {"order_id": "#N2"})
    return out + [named] + [paged(f"p{i}", f"b{i}") for i in range(5)]


def test_learning_two_halves_and_merging_equals_learning_at_once_byte_for_byte():
    scripts = mixed_sessions()
    manifest = SHOP.merged(TRAVEL)
    whole = learn(scripts, manifest, constants=True)
    first, second = learn(scripts[:5], manifest, constants=True), learn(scripts[5:], manifest)
    assert first.merged(second).to_json() == whole.to_json()
    assert second.merged(first).to_json() == whole.to_json()  # and in either order
    assert compile_table(first.merged(second)).to_json() == compile_table(whole).to_json()
    assert learn(scripts, manifest, constants=True).to_json() == whole.to_json()  # learning is repeatable


def test_a_weighted_merge_scales_every_count_as_a_power_prior():
    scripts = mixed_sessions()
    once, twice = learn(scripts[:3]), learn(scripts[:3] * 2)
    assert BindingCounts().merged(once, weight=2.0).to_json() == twice.to_json()
    half = BindingCounts().merged(once, weight=0.5)
    assert half.lookups["get_order_details"].calls == once.lookups["get_order_details"].calls / 2


def test_counts_and_tables_round_trip_through_their_json():
    counts = learn(mixed_sessions(), SHOP.merged(TRAVEL))
    assert BindingCounts.from_json(counts.to_json()).to_json() == counts.to_json()
    table = compile_table(counts)
    again = BindingTable.from_json(table.to_json())
    live = Script().call("get_user_details", {"user_id": "u"}, user_record("u", ["#A1"]))
    assert bind(again, "get_order_details", live.state(SHOP), "get_user_details") == \
        bind(table, "get_order_details", live.state(SHOP), "get_user_details")
    assert "get_order_details: bound" in describe_table(table)
    assert "get_user_details $.orders[*]" in describe_table(table, "get_order_details")


# ---------------------------------------------------------------- real data

def _retail(file_part: str):
    from stretto_core.sessions.ingest.common import ManifestSource
    from stretto_core.sessions.ingest.tau2 import convert
    from stretto_core.paths import data_root

    files = sorted((data_root() / "tau2" / "trajectories" / "retail").glob(f"*{file_part}*.json"))
    assert files, f"τ²-bench retail trajectories are missing under {data_root()}"
    return convert(Path(files[0]), ManifestSource()).sessions


@full_data
def test_on_tau2_retail_orders_bind_from_the_users_list_and_users_from_the_lookup_by_email_or_name():
    from stretto_core.sessions.splits import split_of

    train = [s for s in _retail("toolorchestra") if split_of(s.header) == "train"]
    assert len(train) > 40
    counts = BindingCounts()
    for s in train:
        add_session(counts, s, s.header.manifest)
    table = compile_table(counts)
    order = table.lookups["get_order_details"].args["order_id"]
    assert order.sources[0] == "get_user_details $.orders[*]"
    assert order.rho["*"]["plain"] > 0.85
    user = table.lookups["get_user_details"].args["user_id"]
    assert set(user.sources) >= {"find_user_id_by_email $", "find_user_id_by_name_zip $"}
    assert table.lookups["get_product_details"].args["product_id"].sources[0] == "get_order_details $.items[*].product_id"

    # Served on held-out runs of another agent: bind after every tool result.
    tested = [s for s in _retail("gpt-4.1_retail") if split_of(s.header) == "test"][:20]
    from stretto_core.sessions.model import LLMTurn, ToolResult, UserMessage
    from stretto_core.sessions.state import ToolState

    agreed = offered = 0
    for s in tested:
        state = ToolState(s.header.manifest)
        pending = None
        for e in s.events:
            if isinstance(e, UserMessage):
                state.observe_user(e.text)
            elif isinstance(e, LLMTurn):
                for c in e.calls:
                    if pending is not None and c.tool == "get_order_details" and pending.tool == c.tool:
                        agreed += pending.arguments == c.arguments
                    state.observe_call(c.call_id, c.tool, c.arguments)
            elif isinstance(e, ToolResult):
                state.observe_result(e.call_id, e.tool, e.content, e.parsed, e.error)
                pending = bind(table, "get_order_details", state, site_name(e.tool, e.error))
                offered += pending is not None
    assert offered > 10 and agreed > 5  # the time a bind takes is measured in benchmarks/decision_latency.py


def test_a_session_json_line_survives_the_store_for_binding():
    # A session read back from JSON binds as the one in memory did (results are text either way).
    s = walk_orders("x", "u", ["#A1", "#A2"]).session()
    again = type(s).model_validate(json.loads(s.model_dump_json()))
    assert learn_from(again).to_json() == learn_from(s).to_json()


def learn_from(session) -> BindingCounts:
    counts = BindingCounts()
    add_session(counts, session, SHOP)
    return counts
