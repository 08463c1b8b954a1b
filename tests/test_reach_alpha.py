"""The reach's own α: fitted to the reach's counts, served with the reach, the habit keeping its own."""

from __future__ import annotations

import json
import random

from shop_sessions import shop_flow
from stretto_core.flow.ir import load_flow, save_flow
from stretto_core.learn.alpha import alpha_posterior
from stretto_core.learn.counts import Counts
from stretto_core.learn.reach_alpha import reach_alpha_posterior
from stretto_core.serve.runtime import FlowRuntime

WRITE = "w"


def _counts(sessions: list[list[str]]) -> Counts:
    return Counts.learn((([f"{a}/ok/0" for a in s], s) for s in sessions), lambda a: a == WRITE)


def _sessions(rng: random.Random, reach_follows_context: bool) -> list[list[str]]:
    """After `a` the agent reads `r` before its write and after `b` it does not, or it tosses a coin."""
    out = []
    for _ in range(200):
        head = rng.choice("ab")
        reads = (head == "a") if reach_follows_context else rng.random() < 0.5
        out.append([head, "r" if reads else rng.choice("xy"), rng.choice("xy"), WRITE])
    return out


def test_a_reach_the_context_decides_prefers_a_smaller_alpha_than_a_reach_by_a_coin():
    decided = reach_alpha_posterior(_counts(_sessions(random.Random(1), True)), vocab_size=6)
    coin = reach_alpha_posterior(_counts(_sessions(random.Random(1), False)), vocab_size=6)
    assert decided.lower < decided.alpha < decided.upper
    assert decided.alpha < coin.alpha / 1.3


def test_the_reachs_alpha_is_fitted_to_the_reach_not_to_the_next_step():
    # the next step after `b` is a coin between `x` and `y`, the reach of `r` after it is always
    # 0: the two likelihoods ask for different concentrations
    counts = _counts(_sessions(random.Random(2), True))
    assert reach_alpha_posterior(counts, 6).alpha > 1.5 * alpha_posterior(counts, 6).alpha


def test_a_flow_serves_the_reach_at_its_own_alpha_and_the_habit_at_alpha_and_one_alpha_given_is_both():
    flow = shop_flow().derive()
    assert flow.reach_alpha is not None and flow.alpha is not None
    served = FlowRuntime(flow).model
    assert (served.alpha, served.reach_alpha) == (flow.alpha.alpha, flow.reach_alpha.alpha)
    assert served.alpha != served.reach_alpha
    pinned = FlowRuntime(flow, alpha=1.0).model
    assert (pinned.alpha, pinned.reach_alpha) == (1.0, 1.0)


def test_a_flow_file_written_before_the_reach_had_its_alpha_loads_and_derives_it(tmp_path):
    flow = shop_flow().derive()
    path = save_flow(flow, tmp_path / "f.flow.json") or tmp_path / "f.flow.json"
    data = json.loads(path.read_text())
    del data["reach_alpha"]
    path.write_text(json.dumps(data))
    assert load_flow(path).reach_alpha == flow.reach_alpha
