"""The class lift: whether the user named a record of a list moves the chance a lookup is made at all."""

from __future__ import annotations

from bindings_sessions import SHOP, Script, order_record, user_record
from stretto_core.learn.bindings import BindingCounts, add_session, compile_table, site_name
from stretto_core.learn.bindings.model import MENTIONED, PLAIN
from stretto_core.learn.bindings.named import NAMED, OTHER, PRIOR_DECISIONS, UNNAMED, bucket_of
from stretto_core.learn.reads_ahead import reads_before_write
from stretto_core.serve.bind import bind

ITEMS = [("Water Bottle", "2001"), ("Desk Lamp", "2002")]
SOURCE = "get_order_details $.items[*].product_id"


def customer(name: str, says: str, reads_product: bool) -> Script:
    """A customer who says something, then the agent reads their order (and, if asked, a product)."""
    s = Script(name).user(says)
    s.call("get_user_details", {"user_id": "u"}, user_record("u", ["#A1"]))
    s.call("get_order_details", {"order_id": "#A1"}, order_record("#A1", "u", ITEMS))
    if reads_product:
        s.call("get_product_details", {"product_id": "2001"}, {"product_id": "2001", "name": "Water Bottle"})
    return s.call("cancel_pending_order", {"order_id": "#A1"}, {"status": "cancelled"}).reply()


def counts(scripts: list[Script]) -> BindingCounts:
    out = BindingCounts()
    for s in scripts:
        add_session(out, s.session(), SHOP)
    return out


def training() -> list[Script]:
    # Named the bottle: the agent reads its product; named nothing: it cancels the order straight away.
    named = [customer(f"n{i}", "my water bottle leaks, swap it", True) for i in range(12)]
    plain = [customer(f"p{i}", "please cancel my order", False) for i in range(12)]
    return named + plain + [customer("p-read", "please cancel my order", True)]


def test_reads_before_the_next_write_are_gathered_per_result_of_the_agents_calls():
    s = customer("n", "my water bottle leaks", True).session()
    later = reads_before_write(s, SHOP, set())
    assert later["c2"] == {"get_product_details"}  # after the order: the product, then the write
    assert later["c3"] == frozenset()  # after the product: the write comes next
    assert later["c1"] == {"get_order_details", "get_product_details"}


def test_a_decision_counts_whether_the_user_named_a_record_of_the_list_and_what_was_called_after():
    named = counts(training()).named
    # each session decides after every result; the items list exists from the order on: after
    # the order, the product (if read) and the write: 2 decisions in a session without the product, 3 with
    assert named.decisions[SOURCE] == 12 * 3 + 12 * 2 + 3
    assert named.named[SOURCE] == 12 * 3  # the bottle was named in the twelve swaps
    assert named.called["get_product_details"][SOURCE] == 12 + 1  # after the order, in 12 + 1 sessions
    assert named.called_named["get_product_details"][SOURCE] == 12
    # after the product and after the write the named bottle was passed to the product lookup
    # already, and the lamp (its open pick) is not named: for that tool those decisions are unnamed
    assert named.named_passed["get_product_details"][SOURCE] == 12 * 2
    assert "get_product_details" not in named.passed_named
    assert named.other == {} and named.called_other == {}  # named by a word, never by the product's id


def test_the_lift_holds_an_unnamed_pick_back_shrunk_with_a_prior_of_forty_and_never_raises_a_named_one():
    c = counts(training())
    lift = compile_table(c).lookups["get_product_details"].args["product_id"].class_lift[SOURCE]
    n, k = 12 * 3 + 12 * 2 + 3, 13
    rate = k / n
    n1, k1 = 12 * 3 - 12 * 2, 12
    assert abs(lift[UNNAMED] - ((k - k1 + PRIOR_DECISIONS * rate) / (n - n1 + PRIOR_DECISIONS)) / rate) < 1e-12
    assert lift[UNNAMED] < 0.7
    assert OTHER not in lift  # the bottle was named by a word of its record, not by its id
    assert ((k1 + PRIOR_DECISIONS * rate) / (n1 + PRIOR_DECISIONS)) / rate > 1.5  # counted higher …
    assert NAMED not in lift  # … and served as counted


def test_a_served_pick_is_held_back_by_its_buckets_lift():
    c = counts(training())
    table = compile_table(c)
    at = table.lookups["get_product_details"].args["product_id"]
    for says, mention in (("my water bottle leaks, swap it", MENTIONED), ("please cancel my order", PLAIN)):
        live = Script("live").user(says)
        live.call("get_user_details", {"user_id": "u"}, user_record("u", ["#A1"]))
        live.call("get_order_details", {"order_id": "#A1"}, order_record("#A1", "u", ITEMS))
        got = bind(table, "get_product_details", live.state(SHOP), site_name("get_order_details"))
        assert got.mention == mention and got.arguments == {"product_id": "2001"}
        unlifted = at.rho["*"][mention] * at.site_factor.get("get_order_details", 1.0)
        lift = at.class_lift[SOURCE].get(bucket_of(mention), 1.0)
        assert abs(got.rho - unlifted * lift) < 1e-12
        assert (lift < 0.7) == (mention == PLAIN)


def test_counts_merge_term_by_term_so_two_halves_learn_the_whole():
    scripts = training()
    whole = counts(scripts)
    half = counts(scripts[:10])
    half.add(counts(scripts[10:]))
    assert half.named == whole.named
    assert compile_table(half).to_json() == compile_table(whole).to_json()


def test_binding_counts_of_version_one_read_with_no_named_counts_and_no_lift():
    c = counts(training())
    old = c.model_dump()
    old["stretto_binding_counts"] = 1
    del old["named"]
    read = BindingCounts.model_validate(old)
    assert read.named.decisions == {}
    assert compile_table(read).lookups["get_product_details"].args["product_id"].class_lift == {}
