"""Per-site promotion: a site is judged on the deployment's own clean sessions, and a held one makes no lookup."""

from __future__ import annotations

from pathlib import Path

import pytest

from shop_sessions import MANIFEST, shop_sessions
from stretto_core.cli import main
from stretto_core.evaluate.promotion import clean_sessions, promote
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.flow.ir import learn, load_flow, save_flow
from stretto_core.flow.promotion import Promotion, SitePromotion, judge, posterior_rate, wilson_lower
from stretto_core.flow.review import diff, show
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import Lookup
from stretto_core.sessions.store import write_session


@pytest.fixture(scope="module")
def shop() -> tuple[list, object]:
    sessions = shop_sessions(40)
    return sessions, learn(sessions[:20], MANIFEST)


def test_the_posterior_bar_holds_a_site_the_agent_rarely_uses_and_keeps_one_it_uses() -> None:
    rarely = judge("get_flight", "get_reservation", lookups=31, used=1, tasks=20, score=31 * 0.6,
                   bar="posterior", theta_star=0.3, prior_weight=10)
    often = judge("get_flight", "get_user", lookups=30, used=20, tasks=20, score=30 * 0.6,
                  bar="posterior", theta_star=0.3, prior_weight=10)
    assert rarely.state == "held" and rarely.posterior == pytest.approx((1 + 10 * 0.6) / 41, abs=1e-6)
    assert often.state == "promoted"


def test_with_little_evidence_the_posterior_bar_keeps_the_flows_own_score() -> None:
    assert posterior_rate(used=0, lookups=1, score=0.8, prior_weight=10) == pytest.approx(8 / 11)
    assert judge("s", "t", 1, 0, 1, 0.8, "posterior", 0.3, 10).state == "promoted"
    assert judge("s", "t", 1, 0, 1, 0.8, "posterior", 0.3, 0).state == "held"


def test_the_strict_bar_asks_a_use_rate_its_wilson_bound_and_three_tasks() -> None:
    assert wilson_lower(10, 10) == pytest.approx(0.7225, abs=1e-3)
    assert judge("s", "t", 10, 10, 3, 5, "strict", 0.3, 10).state == "promoted"
    assert judge("s", "t", 10, 10, 2, 5, "strict", 0.3, 10).state == "held"  # two tasks
    assert judge("s", "t", 4, 3, 4, 2, "strict", 0.3, 10).state == "held"  # 0.75 used, Wilson bound 0.30


def test_promote_never_judges_on_sessions_the_flow_learned_from_nor_on_served_ones(shop) -> None:
    sessions, flow = shop
    served = sessions[30].model_copy(update={"header": sessions[30].header.model_copy(update={"mode": "serve"}),
                                             "events": [*sessions[30].events, Lookup(call_id="stretto-1", tool="get_order_details")]})
    clean = clean_sessions([*sessions[:30], served], flow)
    assert (len(clean.sessions), clean.learned, clean.served) == (10, 20, 1)
    promoted, used = promote(flow, sessions)
    assert promoted.promotion is not None and promoted.promotion.sessions == 20 == len(used.sessions)
    assert {s.tool for s in promoted.promotion.sites} >= {"get_order_details", "get_user_details"}
    assert all(s.lookups > 0 and s.tasks > 0 for s in promoted.promotion.sites)


def test_the_strict_bar_switches_off_more_lookups_than_the_posterior_bar_backs_off_on_the_shop(shop) -> None:
    sessions, flow = shop
    posterior = promote(flow, sessions[:30], "posterior")[0]
    strict = promote(flow, sessions[:30], "strict")[0]
    assert posterior.promotion is not None and strict.promotion is not None
    assert strict.promotion.unscored == "held" and posterior.promotion.unscored == "promoted"
    assert posterior.promotion.evidence is not None and strict.promotion.evidence is None
    made = {name: replay_sessions(FlowRuntime(f), sessions[30:], ReplayOptions(processes=1)).lookups
            for name, f in (("none", flow), ("posterior", posterior), ("strict", strict))}
    assert made["strict"] < made["posterior"] <= made["none"]


def test_a_held_site_makes_no_lookup_and_the_others_serve_as_before(shop) -> None:
    sessions, flow = shop
    test = sessions[20:]
    before = replay_sessions(FlowRuntime(flow), test, ReplayOptions(processes=1))
    site, tool = "get_user_details", "get_order_details"
    hold = Promotion(theta_star=0.3, sites=[SitePromotion(site=site, tool=tool, state="held")])
    after = replay_sessions(FlowRuntime(flow.model_copy(update={"promotion": hold})), test, ReplayOptions(processes=1))
    made = {(r.site, r.tool) for r in before.lookup_rows}
    assert (site, tool) in made
    assert (site, tool) not in {(r.site, r.tool) for r in after.lookup_rows}
    assert after.lookups < before.lookups and after.turns_saved < before.turns_saved
    kept = [r for r in before.lookup_rows if (r.site, r.tool) != (site, tool) and r.site != "get_order_details"]
    assert kept and len(after.lookup_rows) >= len(kept)


def test_the_cli_promotes_then_show_and_diff_say_which_sites_are_held(shop, tmp_path: Path, capsys) -> None:
    sessions, flow = shop
    for s in sessions:
        write_session(s, tmp_path / "sessions")
    path = tmp_path / "app.flow.json"
    save_flow(flow, path)
    assert main(["flow", "promote", str(path), "--sessions", str(tmp_path / "sessions"), "--bar", "strict",
                 "--out", str(tmp_path / "strict.flow.json")]) == 0
    out = capsys.readouterr().out
    assert "20 clean sessions; set aside: 20 the flow learned from" in out and "HELD" in out
    promoted = load_flow(tmp_path / "strict.flow.json")
    assert promoted.promotion is not None and promoted.promotion.bar == "strict"
    assert "held back: no lookup" in show(promoted) and "## Promotion" in show(promoted)
    held = diff(flow, promoted)
    assert any("held back (no lookup)" in line for line in held.info)
    back = diff(promoted, flow)
    assert any("newly promoted" in line for line in back.review)
    assert main(["flow", "diff", str(tmp_path / "strict.flow.json"), str(path)]) == 1
    assert main(["flow", "promote", str(path), "--sessions", str(tmp_path / "sessions"), "--bar", "lenient"]) == 2


def test_a_version_1_flow_file_is_read_and_written_as_version_2(shop, tmp_path: Path) -> None:
    _, flow = shop
    old = flow.model_copy(update={"stretto_flow": 1})
    old.provenance = old.provenance.model_copy(update={"learned": None})
    (tmp_path / "v1.flow.json").write_text(old.to_json() + "\n")
    read = load_flow(tmp_path / "v1.flow.json")
    assert read.stretto_flow == 2 and read.provenance.learned is None
