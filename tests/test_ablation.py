"""The ablation: every variant builds and replays, and each switch takes away exactly its part."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from stretto_core.evaluate.variants import VARIANTS, PooledRho, VariantFlows, learn_for, model_for, options_of, variant
from stretto_core.learn.bindings.model import BindingOptions
from stretto_core.serve.engine import Engine
from stretto_core.cli import app
from stretto_core.serve.runtime import FlowRuntime
from stretto_core.serve.chain_order import SCORE_ORDER, Ordered
from stretto_core.evaluate.measure.ablation import ablate_domain, render_ablation
from stretto_core.evaluate.replay.run import ReplayOptions, replay_sessions
from stretto_core.sessions.splits import save_split_file
from stretto_core.sessions.store import write_session
from test_bench_plan import corpus


def small_corpus():
    return corpus(("me", "train", 6, False), ("you", "train", 6, False), ("me", "test", 4, False))


def test_every_variant_builds_and_replays_on_a_small_slice() -> None:
    rows = ablate_domain(small_corpus(), "shop", VARIANTS, draws=50)
    assert [r.variant for r in rows] == [v.name for v in VARIANTS]
    assert all(r.episodes == 4 and r.metrics.turns_saved.point is not None for r in rows)
    assert rows[0].difference is None and all(r.difference is not None for r in rows[1:])
    assert "no mention classes" in render_ablation(rows)


def test_asking_for_full_alone_gives_its_row_alone() -> None:
    rows = ablate_domain(small_corpus(), "shop", [variant("full")], draws=50)
    assert len(rows) == 1 and rows[0].variant == "full"


def test_the_simple_variants_rho_is_the_pooled_laplace_rate_of_the_tables_support() -> None:
    c = small_corpus()
    flow = learn_for(c.on("train", "shop"), variant("simple"))
    model = model_for(flow, variant("simple"))
    assert isinstance(model, Ordered) and model.chain_order == SCORE_ORDER  # Algorithm 1's order
    assert isinstance(model.model, PooledRho) and model.model.runtime.alpha == 1.0
    lookup = flow.table.lookups["get_user"]
    assert lookup.kind == "bound" and list(lookup.args) == ["user_id"]
    k = sum(s[0] for s in lookup.args["user_id"].support.values())
    n = sum(s[1] for s in lookup.args["user_id"].support.values())
    by_hand = (k + 1) / (n + 2)
    replay = replay_sessions(model, c.on("test", "shop"), ReplayOptions(weigh=True))
    bound = [r.binding for r in replay.weighed_rows if r.tool == "get_user"]
    assert bound and all(abs(b - by_hand) < 1e-12 for b in bound)


def test_alpha_one_serves_at_one_and_full_at_the_posterior_median() -> None:
    flow = learn_for(small_corpus().on("train", "shop"), variant("full"))
    assert model_for(flow, variant("alpha1")).alpha == 1.0
    full = model_for(flow, variant("full"))
    assert isinstance(full, FlowRuntime) and full.alpha == flow.alpha.alpha


def test_a_variant_without_look_back_learns_and_serves_from_the_newest_result_only() -> None:
    assert options_of(variant("full")) == BindingOptions()
    assert options_of(variant("newest")).look_back == 1
    assert options_of(variant("no_align")).align is False
    flow = learn_for(small_corpus().on("train", "shop"), variant("newest"))
    model = model_for(flow, variant("newest"))
    assert model.look_back == 1 and Engine(model).session().state.look_back == 1


def test_flows_are_learned_once_per_sessions_and_features() -> None:
    flows = VariantFlows()
    train = small_corpus().on("train", "shop")
    flows.model(train, variant("full"))
    flows.model(train, variant("simple"))
    flows.model(train, variant("features"))
    assert len(flows._flows) == 2


def test_the_ablate_verb_prints_each_variant_and_writes_json(tmp_path) -> None:
    c = small_corpus()
    for s in c.sessions:
        write_session(s, tmp_path / "sessions")
    save_split_file(c.split, tmp_path / "split.json")
    out = tmp_path / "ablation.json"
    result = CliRunner().invoke(app, ["ablate", "--sessions", str(tmp_path / "sessions"), "--split-file",
                                      str(tmp_path / "split.json"), "--variants", "full,simple,next",
                                      "--draws", "20", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "next-step rule" in result.output
    assert [r["variant"] for r in json.loads(out.read_text())] == ["full", "simple", "next"]


def test_variants_that_learn_as_full_does_share_the_flow_given_and_the_others_learn_their_own() -> None:
    c = small_corpus()
    given: list[int] = []

    def default(sessions):
        given.append(len(sessions))
        return learn_for(sessions, variant("full"))

    flows = VariantFlows(default=default)
    rows = ablate_domain(c, "shop", VARIANTS, draws=20, flows=flows)
    assert len(rows) == len(VARIANTS) and len(given) == 1, "full, α = 1, classes, simple, alignment, next: one flow"
    assert len(flows._flows) == 4, "features and no look-back learn their own, and the recalibrated flow is kept apart"
    alone = ablate_domain(c, "shop", VARIANTS, draws=20)
    assert [r.metrics.turns_saved.point for r in rows] == [r.metrics.turns_saved.point for r in alone]
