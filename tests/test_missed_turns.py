"""The missed-turns benchmark gives every unsaved ceiling turn of a real replay exactly one reason."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from real_corpora import corpus_sessions
from shared_data import published_data

from stretto_core.evaluate.measure.ablation import assignments_for
from stretto_core.evaluate.measure.bench_data import Corpus
from stretto_core.evaluate.replay.run import ReplayOptions
from stretto_core.evaluate.variants import VariantFlows, variant
from stretto_core.sessions.splits import make_split_file

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "missed_turns.py"


def _script():
    sys.path.insert(0, str(SCRIPT.parent))  # it imports its sibling benchmarks, as when run
    spec = importlib.util.spec_from_file_location("missed_turns", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@published_data
def test_each_unsaved_ceiling_turn_of_a_retail_replay_has_one_reason(tmp_path: Path) -> None:
    missed_turns = _script()
    sessions = corpus_sessions("retail", tmp_path, most=400)
    corpus = Corpus("retail", sessions, make_split_file([s.header for s in sessions]))
    v = variant("full")
    options = ReplayOptions(theta=0.3, policy=v.policy, weigh=True, split="test", processes=1)
    tally = missed_turns.tally_reasons(assignments_for(corpus, "tau2/retail", v, VariantFlows()), options)
    unsaved = tally.ceiling - tally.saved
    assert unsaved > 0, "the replay missed no ceiling turn: nothing was classified"
    assert sum(tally.reasons.values()) == unsaved
    assert set(tally.reasons) <= set(missed_turns.REASONS)
