"""Each site's score recalibrated on the use counted there: the factor, the cross-fit, the flow file, serving."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from real_corpora import corpus_sessions
from shared_data import published_data
from shop_sessions import MANIFEST, shop_sessions
from stretto_core.cli import app
from stretto_core.errors import StrettoError
from stretto_core.evaluate.replay.episode import prepare_sessions
from stretto_core.evaluate.replay.record import RecordSource
from stretto_core.evaluate.replay.run import ReplayOptions, build_engine
from stretto_core.evaluate.replay.walk import Walk
from stretto_core.evaluate.site_calibration import (calibrate_sites, cross_fit_parts, fold_key, folds_by_hash)
from stretto_core.evaluate.measure.bench_plan import agent_key
from stretto_core.flow.ir import Flow, learn, load_flow, merge, save_flow
from stretto_core.flow.site_calibration import SiteCalibration, SiteCount, site_key
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.sessions.model import Session
from stretto_core.sessions.store import write_session


def count(weighed: float, score: float, used: float, tool: str = "get", site: str = "find") -> SiteCount:
    return SiteCount(tool=tool, site=site, source=f"{site} $.id", mention="plain", weighed=weighed, score=score,
                     used=used)


def test_a_site_where_nothing_was_scored_keeps_its_score() -> None:
    assert count(0, 0, 0).factor(40) == 1.0
    assert count(3, 0, 2).factor(40) == 1.0


def test_a_site_with_many_candidates_takes_the_rate_counted_there() -> None:
    many = count(10_000, 5_000, 1_000)
    assert many.factor(0) == pytest.approx(0.2)
    assert many.factor(40) == pytest.approx((1_000 + 40 * 0.5) / (5_000 + 40 * 0.5))
    assert 0.2 < many.factor(40) < 0.21


def test_the_prior_holds_a_small_site_near_its_own_score() -> None:
    few = count(4, 2, 4)
    assert few.factor(0) == pytest.approx(2.0)
    assert few.factor(40) == pytest.approx((4 + 20) / (2 + 20))
    assert few.factor(40) < few.factor(10) < few.factor(0)


def calibrated(flow: Flow, *sites: SiteCount, prior: float = 40) -> Flow:
    return flow.model_copy(update={"site_calibration": SiteCalibration(prior=prior, sites=list(sites))})


@pytest.fixture(scope="module")
def shop() -> list[Session]:
    return shop_sessions(24)


@pytest.fixture(scope="module")
def shop_flow(shop: list[Session]) -> Flow:
    return learn(shop, MANIFEST)


def test_merging_two_calibrated_flows_adds_their_sites_in_either_order(shop_flow: Flow) -> None:
    a = calibrated(shop_flow, count(10, 5, 1), count(4, 2, 4, site="other"))
    b = calibrated(shop_flow, count(6, 3, 3), count(2, 1, 0, tool="list"))
    ab, ba = merge(a, b), merge(b, a)
    assert ab.to_json() == ba.to_json()
    sites = {s.key: s for s in ab.site_calibration.sites}
    assert (sites[count(0, 0, 0).key].weighed, sites[count(0, 0, 0).key].used) == (16, 4)
    assert len(sites) == 3


def test_a_flow_without_a_calibration_lends_none_to_a_merge(shop_flow: Flow) -> None:
    a = calibrated(shop_flow, count(10, 5, 1))
    assert merge(a, shop_flow).site_calibration == a.site_calibration
    assert merge(shop_flow, shop_flow).site_calibration is None


def test_calibrations_of_different_priors_are_not_merged(shop_flow: Flow) -> None:
    with pytest.raises(StrettoError, match="different priors"):
        merge(calibrated(shop_flow, count(1, 1, 1), prior=40), calibrated(shop_flow, count(1, 1, 1), prior=10))


def test_a_calibrated_flow_file_reads_back_byte_for_byte(shop_flow: Flow, tmp_path: Path) -> None:
    path = tmp_path / "f.flow.json"
    save_flow(calibrated(shop_flow, count(10, 5, 1)), path)
    again = tmp_path / "g.flow.json"
    save_flow(load_flow(path), again)
    assert path.read_bytes() == again.read_bytes()
    assert '"site_calibration"' in path.read_text()


def test_a_flow_file_with_a_negative_site_count_is_refused_naming_the_field(shop_flow: Flow, tmp_path: Path) -> None:
    path = tmp_path / "f.flow.json"
    save_flow(calibrated(shop_flow, count(10, 5, 1)), path)
    data = json.loads(path.read_text())
    data["site_calibration"]["sites"][0]["used"] = -3
    path.write_text(json.dumps(data))
    with pytest.raises(StrettoError, match="site_calibration") as caught:
        load_flow(path)
    assert "\n" not in str(caught.value)


def test_an_uncalibrated_flow_writes_no_calibration_field(shop_flow: Flow) -> None:
    assert "site_calibration" not in shop_flow.to_json()


def test_no_held_out_session_shares_a_task_or_an_agent_with_the_sessions_scoring_it(shop: list[Session]) -> None:
    fold_of = folds_by_hash(sorted({fold_key(s) for s in shop}), 5)
    parts = [p for k in range(5) for p in cross_fit_parts(shop, fold_of, k)]
    assert parts, "no fold had sessions to hold out"
    agents = {agent_key(s.header.agent_model) for s in shop}
    for learn_from, held in parts:
        assert {fold_key(s) for s in learn_from}.isdisjoint(fold_key(s) for s in held)
        if len(agents) > 1:
            assert {agent_key(s.header.agent_model) for s in learn_from}.isdisjoint(
                agent_key(s.header.agent_model) for s in held)
    assert sum(len(held) for _, held in parts) == len(shop)


class Twin:
    """Serves as the plain runtime does and asks the calibrated one the same question at every binding."""

    def __init__(self, plain: FlowRuntime, calibrated_runtime: FlowRuntime) -> None:
        self.plain, self.calibrated = plain, calibrated_runtime
        self.pairs: list[tuple[Any, Any, Any]] = []

    def bind(self, tool: str, state: Any, site: str) -> Any:
        got = self.plain.bind(tool, state, site)
        if got is not None:
            self.pairs.append((site_key(tool, site, got), got, self.calibrated.bind(tool, state, site)))
        return got

    def __getattr__(self, name: str) -> Any:
        return getattr(self.plain, name)


def bindings_both_ways(flow: Flow, sessions: list[Session]) -> tuple[Twin, dict]:
    """Replay `sessions` with `flow` as learned and recalibrated by cross-fitting `sessions`."""
    calibration = calibrate_sites(sessions, lambda part: learn(list(part), MANIFEST))
    twin = Twin(FlowRuntime(flow), FlowRuntime(flow.model_copy(update={"site_calibration": calibration})))
    engine = build_engine(twin, ReplayOptions(theta=0.3, weigh=True, processes=1))
    for episode in prepare_sessions(sessions):
        Walk(episode, engine, RecordSource(), weigh=True).run()
    return twin, calibration.factors()


def test_a_served_binding_keeps_its_arguments_and_takes_its_sites_factor_on_rho(shop: list[Session],
                                                                               shop_flow: Flow) -> None:
    twin, factors = bindings_both_ways(shop_flow, shop)
    moved = 0
    for key, plain, recal in twin.pairs:
        assert recal.arguments == plain.arguments
        assert recal.rho == pytest.approx(min(1.0, plain.rho * factors.get(key, 1.0)))
        moved += abs(factors.get(key, 1.0) - 1.0) > 1e-9 and plain.rho > 0
    assert moved >= 10, f"only {moved} of {len(twin.pairs)} bindings were at a site the calibration moved"


def test_a_runtime_told_not_to_recalibrate_serves_the_flow_as_learned(shop_flow: Flow) -> None:
    flow = calibrated(shop_flow, count(10, 5, 1))
    assert FlowRuntime(flow).site_factors
    assert FlowRuntime(flow, recalibrate=False).site_factors == {}


@published_data
def test_retail_sites_the_agents_seldom_used_are_scaled_down_by_the_cross_fit(tmp_path: Path) -> None:
    sessions = corpus_sessions("retail", tmp_path, most=80)
    calibration = calibrate_sites(sessions, lambda part: learn(list(part)))
    assert calibration.sites, "the cross-fit weighed no candidate"
    for s in calibration.sites:
        assert s.used <= s.weighed and s.score <= s.weighed
    factors = calibration.factors()
    assert any(f < 0.95 for f in factors.values()), "no site was scaled down"
    assert sum(s.weighed for s in calibration.sites) >= 50


def test_learn_recalibrate_writes_a_calibrated_flow(shop: list[Session], tmp_path: Path) -> None:
    for s in shop:
        write_session(s, tmp_path / "sessions")
    out = tmp_path / "shop.flow.json"
    result = CliRunner().invoke(app, ["learn", str(tmp_path / "sessions"), "--split", "all", "--out", str(out),
                                      "--recalibrate"])
    assert result.exit_code == 0, result.output
    assert "sites calibrated" in result.output
    flow = load_flow(out)
    assert flow.site_calibration is not None and flow.site_calibration.sites


def test_flow_show_lists_the_sites_a_calibration_moves_and_not_the_others(shop_flow: Flow) -> None:
    from stretto_core.flow.review import show

    text = show(calibrated(shop_flow, count(100, 50, 10, tool="lowered"), count(100, 50, 50, tool="kept")))
    assert "## Site calibration" in text
    assert "| `lowered` |" in text and "| `kept` |" not in text
    assert "## Site calibration" not in show(shop_flow)


def test_flow_diff_asks_a_review_for_a_raised_factor_and_informs_of_a_lowered_one(shop_flow: Flow) -> None:
    from stretto_core.flow.review import diff

    before = calibrated(shop_flow, count(100, 50, 50, tool="up"), count(100, 50, 50, tool="down"))
    after = calibrated(shop_flow, count(100, 50, 90, tool="up"), count(100, 50, 10, tool="down"))
    d = diff(before, after)
    assert any("up from" in line and "calibrated" in line for line in d.review)
    assert any("down from" in line and "calibrated" in line for line in d.info)
    assert not any("down from" in line for line in d.review)


def _two_agents(sessions: list[Session]) -> list[Session]:
    """The shop's sessions, every other one relabelled as run by a second agent."""
    return [s if i % 2 else s.model_copy(update={"header": s.header.model_copy(update={"agent_model": "other-agent"})})
            for i, s in enumerate(sessions)]


def test_counting_each_cell_once_calibrates_as_learning_every_part(shop: list[Session]) -> None:
    from stretto_core.flow.ir import count_sessions, manifest_of_sessions

    sessions = _two_agents(shop)
    assert len({agent_key(s.header.agent_model) for s in sessions}) == 2
    by_parts = calibrate_sites(sessions, lambda part: learn(list(part), MANIFEST))
    by_cells = calibrate_sites(sessions, lambda part: pytest.fail("the cells' path learned a part whole"),
                               count_flow=lambda part: count_sessions(list(part), manifest_of_sessions(part, MANIFEST)))
    assert by_parts.sites, "the cross-fit weighed no candidate"
    assert [(s.tool, s.site, s.source, s.mention) for s in by_cells.sites] == \
        [(s.tool, s.site, s.source, s.mention) for s in by_parts.sites]
    for a, b in zip(by_cells.sites, by_parts.sites):
        assert (a.weighed, a.used) == (b.weighed, b.used)
        assert a.score == pytest.approx(b.score, rel=1e-9)


def test_adding_many_flows_in_place_gives_the_bytes_of_adding_them_one_by_one(shop: list[Session]) -> None:
    from stretto_core.flow.ir import _add, count_sessions
    from stretto_core.flow.stream import add_all

    parts = [count_sessions(shop[i:i + 5], MANIFEST) for i in range(0, len(shop), 5)]
    assert len(parts) >= 4
    before = [p.to_json() for p in parts]
    chained = parts[0]
    for p in parts[1:]:
        chained = _add(chained, p)
    assert add_all(parts).derive().to_json() == chained.derive().to_json() == learn(shop, MANIFEST).to_json()
    assert [p.to_json() for p in parts] == before  # no part was changed by adding it
