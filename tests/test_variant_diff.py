"""variant_diff's train-split reading: candidates filtered by TOOL@SITE, and a flow's use counted by site."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from stretto_core.evaluate.replay.rows import ReplayConfig, ReplayResult, WeighedRow

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "variant_diff.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("variant_diff", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _weighed(session: str, tool: str, site: str, score: float, used: bool, made: bool = False) -> WeighedRow:
    return WeighedRow(session_id=session, decision=0, tool=tool, site=site, reach=score, next_p=0.0, binding=1.0,
                      score_use=score, score_next=0.0, used=used, made=made)


def _result(*rows: WeighedRow) -> ReplayResult:
    return ReplayResult(config=ReplayConfig(split="train", weigh=True), weighed_rows=list(rows))


def test_weighed_candidates_are_kept_only_where_tool_and_site_match_or_are_starred() -> None:
    diff = _script()
    result = _result(_weighed("s1", "get_balance", "get_iban", 0.39, True, made=True),
                     _weighed("s1", "get_iban", "get_user_info", 0.31, False, made=True),
                     _weighed("s2", "get_balance", "get_user_info", 0.13, True))
    exact = diff.weighed_by_episode(result, "get_balance@get_iban")
    assert list(exact) == ["s1"] and len(exact["s1"]) == 1
    assert "q 0.39" in exact["s1"][0] and "made, used" in exact["s1"][0]
    any_site = diff.weighed_by_episode(result, "get_balance@*")
    assert sorted(any_site) == ["s1", "s2"] and "not made, used" in any_site["s2"][0]
    assert sum(map(len, diff.weighed_by_episode(result, "*@*").values())) == 3


def test_site_use_lists_only_sites_with_a_use_most_used_first_with_their_mean_score() -> None:
    diff = _script()
    result = _result(_weighed("a", "get_scheduled_transactions", "read_file", 0.06, True),
                     _weighed("b", "get_scheduled_transactions", "read_file", 0.10, False),
                     _weighed("a", "get_balance", "get_user_info", 0.14, True, made=True),
                     _weighed("b", "get_balance", "get_user_info", 0.14, False),
                     _weighed("c", "get_balance", "get_user_info", 0.14, False),
                     _weighed("a", "get_iban", "get_user_info", 0.25, False))
    lines = diff.site_use(result)
    assert len(lines) == 2, "a site none of whose candidates was used is left out"
    assert lines[0].startswith("get_scheduled_transactions at read_file: 2 weighed, 0 made, 1 used (0.50)")
    assert lines[0].endswith("mean score 0.08")
    assert lines[1] == "get_balance at get_user_info: 3 weighed, 1 made, 1 used (0.33), mean score 0.14"
