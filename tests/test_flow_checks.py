"""A flow file with a bad value is refused with `file: field: problem`, by every verb that reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from shop_sessions import shop_flow, shop_sessions
from stretto_core.cli import main
from stretto_core.errors import InputError
from stretto_core.flow.ir import load_flow, save_flow
from stretto_core.sessions.store import write_session

Edit = Callable[[dict[str, Any]], None]


def _set(*path_and_value: Any) -> Edit:
    *path, value = path_and_value

    def edit(data: dict[str, Any]) -> None:
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


def _rho_above_one(data: dict[str, Any]) -> None:
    evidence = data["bindings"]["lookups"]["get_user_details"]["args"]["user_id"]["evidence"]["free"]["plain"]
    evidence["find_user_id_by_email $"] = [20.0, 200.0]


HABIT = ("counts", "groups", 0, "habit")
BAD_FLOWS: dict[str, tuple[Edit, str]] = {
    "context order 0": (_set("counts", "order", 0), "counts.order: 0"),
    "context order -1": (_set("counts", "order", -1), "counts.order: -1"),
    "a context of the wrong length": (lambda d: d["counts"]["groups"][0]["habit"][0][0].append("x/ok/0"),
                                      "a context of 3 symbols in counts of order 2"),
    "a context that is no step": (lambda d: d["counts"]["groups"][0]["habit"][1][0].__setitem__(1, "nonsense"),
                                  "'nonsense' is not a step symbol"),
    "α NaN": (_set("alpha", "alpha", float("nan")), "NaN"),
    "α 0": (_set("alpha", "alpha", 0), "alpha.alpha: 0 is not a positive number"),
    "α negative": (_set("alpha", "alpha", -1.5), "alpha.alpha: -1.5 is not a positive number"),
    "the reach's α 0": (_set("reach_alpha", "alpha", 0), "reach_alpha.alpha: 0 is not a positive number"),
    "the reach's α edited": (_set("reach_alpha", "alpha", 123.0), "reach_alpha: does not match"),
    "a NaN weight": (_set("counts", "groups", 0, "weight", float("nan")), "NaN"),
    "a negative weight": (_set("counts", "groups", 0, "weight", -1.0), "counts.groups[0].weight: -1.0"),
    "a negative count": (lambda d: d["counts"]["groups"][0]["habit"][0][1][0].__setitem__(1, -5), "-5 is not a finite"),
    "a negative binding count": (_set("bindings", "sessions", -3.0), "bindings.sessions: -3.0"),
    "a reach above its steps": (lambda d: d["counts"]["groups"][0]["reach"][0][1][0].__setitem__(1, 10_000),
                                "a reach count of 10000"),
    "an unknown action": (lambda d: d["counts"]["groups"][0]["habit"][0][1].append(["zzz_unknown", 3]),
                          "vocab: does not match"),
    "ρ above 1": (_rho_above_one, "is outside [0, 1]"),
    "an intent rule edited": (_set("intent_table", {"rules": {"get_order_details": {"get_product_details": {
        "said": {"return": 0.01}}}}}), "intent_table: does not match"),
    "a negative intent count": (_set("intent", "decisions", {"get_order_details": -2.0}),
                                "intent.decisions.get_order_details: -2.0"),
    "a NaN threshold": (_set("thresholds", {"get_user_details": float("nan")}), "NaN"),
    "a negative threshold": (_set("thresholds", {"get_user_details": -0.5}), "thresholds.get_user_details: -0.5"),
    "stretto_flow true": (_set("stretto_flow", True), "stretto_flow True is not version 1 or 2"),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("flows")
    save_flow(shop_flow(), root / "good.flow.json")
    for s in shop_sessions(24)[20:]:
        write_session(s, root / "sessions")
    return root


def bad_flow(folder: Path, tmp_path: Path, case: str) -> Path:
    data = json.loads((folder / "good.flow.json").read_text())
    BAD_FLOWS[case][0](data)
    path = tmp_path / "bad.flow.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("case", list(BAD_FLOWS))
def test_a_flow_with_a_bad_value_is_refused_naming_the_field(folder: Path, tmp_path: Path, case: str) -> None:
    with pytest.raises(InputError) as refused:
        load_flow(bad_flow(folder, tmp_path, case))
    assert str(refused.value).startswith(f"{tmp_path / 'bad.flow.json'}")
    assert BAD_FLOWS[case][1] in str(refused.value)


VERBS = {
    "flow show": lambda bad, good, root: ["flow", "show", str(bad)],
    "flow diff": lambda bad, good, root: ["flow", "diff", str(good), str(bad)],
    "flow merge": lambda bad, good, root: ["flow", "merge", str(good), str(bad), "--out", str(root / "m.flow.json")],
    "replay": lambda bad, good, root: ["replay", "--flow", str(bad), "--sessions", str(root / "sessions"),
                                       "--json", str(root / "r.json")],
}


@pytest.mark.parametrize("verb", list(VERBS))
@pytest.mark.parametrize("case", ["context order 0", "a context of the wrong length", "α NaN", "a negative weight",
                                  "an unknown action", "ρ above 1"])
def test_every_verb_that_reads_a_bad_flow_says_so_in_one_line(folder: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture, verb: str,
                                                              case: str) -> None:
    bad = bad_flow(folder, tmp_path, case)
    capsys.readouterr()
    assert main(VERBS[verb](bad, folder / "good.flow.json", folder)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"stretto: {bad}") and BAD_FLOWS[case][1] in err[-1]


def test_a_good_flow_loads_as_it_was_saved(folder: Path) -> None:
    assert load_flow(folder / "good.flow.json").to_json() + "\n" == (folder / "good.flow.json").read_text()


def test_a_threshold_of_nan_is_refused_and_the_flow_left_as_it_was(folder: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "f.flow.json"
    path.write_bytes((folder / "good.flow.json").read_bytes())
    assert main(["flow", "threshold", str(path), "--site", "get_user_details", "--theta", "nan"]) == 2
    assert "--theta" in capsys.readouterr().err
    assert path.read_bytes() == (folder / "good.flow.json").read_bytes()


def test_a_weight_that_overflows_the_counts_writes_no_infinity(folder: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    good = str(folder / "good.flow.json")
    assert main(["flow", "merge", good, good, "--weight", "1e308", "--out", str(tmp_path / "m.flow.json")]) == 2
    assert "overflows" in capsys.readouterr().err
    assert not (tmp_path / "m.flow.json").exists()
