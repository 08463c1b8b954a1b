"""A flow learned with priors of fractional weight loads and replays through the CLI: the loader
compares derived numbers within a relative 1e-9 (summing weights in another order moves the last
digit), and still refuses a derived number edited by hand (issue 26, item 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared_data import full_data, published_data

from stretto_core.cli import main
from stretto_core.errors import InputError
from stretto_core.flow.ir import load_flow
from stretto_core.paths import data_root
from stretto_core.sessions.ingest import ingest_files


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("priors")
    ingest_files("tau2", [data_root() / "tau2/trajectories/retail"], out / "retail")
    ingest_files("tau2", [data_root() / "tau2/trajectories/airline"], out / "airline")
    return out


@published_data
@pytest.mark.parametrize("weight", ["3", "12.9"])
def test_a_flow_learned_with_weighted_priors_loads_and_replays(corpora: Path, tmp_path: Path, weight: str) -> None:
    flow = tmp_path / "retail.flow.json"
    assert main(["learn", str(corpora / "retail"), "--prior", str(corpora / "airline"), "--prior-weight", weight,
                 "--split", "all", "--out", str(flow)]) == 0
    load_flow(flow)
    assert main(["replay", "--flow", str(flow), "--sessions", str(corpora / "retail"), "--split", "all",
                 "--json", str(tmp_path / "replay.json")]) == 0


@published_data
def test_a_derived_number_edited_past_the_tolerance_is_still_refused(corpora: Path, tmp_path: Path) -> None:
    flow = tmp_path / "retail.flow.json"
    assert main(["learn", str(corpora / "retail"), "--split", "all", "--out", str(flow)]) == 0
    data = json.loads(flow.read_text())
    data["alpha"]["alpha"] *= 1 + 1e-6
    flow.write_text(json.dumps(data))
    with pytest.raises(InputError, match="alpha"):
        load_flow(flow)


@full_data
def test_on_the_full_data_a_prior_weighing_12_9_gives_a_flow_that_loads_and_replays(corpora: Path,
                                                                                     tmp_path: Path) -> None:
    """The case the issue found (on b7c779d this flow's `table` was refused: its last digits moved)."""
    test_a_flow_learned_with_weighted_priors_loads_and_replays(corpora, tmp_path, "12.9")


@published_data
def test_derived_numbers_one_unit_in_the_last_place_apart_are_the_same(corpora: Path, tmp_path: Path) -> None:
    """What summing weights in another order does to a derived number: the flow still loads."""
    import math

    flow = tmp_path / "retail.flow.json"
    assert main(["learn", str(corpora / "retail"), "--prior", str(corpora / "airline"), "--prior-weight", "3",
                 "--split", "all", "--out", str(flow)]) == 0
    data = json.loads(flow.read_text())
    data["alpha"]["alpha"] = math.nextafter(data["alpha"]["alpha"], math.inf)
    flow.write_text(json.dumps(data))
    load_flow(flow)
