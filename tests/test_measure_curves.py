"""Learning curves: the first n of each pool, several orders, and n never larger than the pool."""

from __future__ import annotations

from stretto_core.evaluate.measure.curves import curve_rows, learning_curve, render_curves
from test_measure_rows import shop_episode


def sessions(count: int, agent: str, start: int = 0):
    out = []
    for n in range(start, start + count):
        s = shop_episode(n).session()
        s.header.agent_model = agent
        out.append(s)
    return out


def test_a_curve_learns_from_each_size_its_pool_allows_in_each_order_and_from_all_once() -> None:
    own, others = sessions(12, "me"), sessions(5, "them", start=100)
    test = [shop_episode(n).session() for n in range(200, 206)]
    points = learning_curve("shop", "me", own, others, test, sizes=(10, 30), orders=2)
    sizes = {(p.protocol, p.sessions, p.all) for p in points}
    assert ("own", 10, False) in sizes and ("own", 12, True) in sizes
    assert not any(p.sessions == 30 for p in points)
    assert [p.run for p in points if p.protocol == "own" and p.sessions == 10] == [0, 1]
    assert ("others", 5, True) in sizes and ("prior", 10, False) in sizes
    assert all(p.episodes == 6 for p in points)


def test_the_table_shows_a_dash_where_no_agent_had_that_many_sessions() -> None:
    own = sessions(12, "me")
    test = [shop_episode(n).session() for n in range(200, 204)]
    rows = curve_rows(learning_curve("shop", "me", own, [], test, sizes=(10, 30), orders=1))
    table = render_curves(rows, (10, 30))
    assert "the agent's own sessions" in table and "—" in table and "(12)" in table
    assert "other agents' sessions" not in table
