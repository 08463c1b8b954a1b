"""`stretto bench --quick` runs end to end on a slice of the published data (its time is a benchmark's, not a test's)."""

from __future__ import annotations

import json

import pytest

from shared_data import full_data
from stretto_core.cli import main
from stretto_core.paths import data_root

needs_data = pytest.mark.skipif(not (data_root() / "tau2").is_dir(), reason="published data not found (STRETTO_DATA)")


@needs_data
@full_data
def test_a_quick_bench_writes_the_readme_the_plots_and_the_json_rows(tmp_path) -> None:
    out = tmp_path / "results"
    assert main(["bench", "--quick", "--no-progress", "--out", str(out)]) == 0
    readme = (out / "README.md").read_text(encoding="utf-8")
    for heading in ("## Split", "Table 3", "Table 2", "Table 4", "Table 3b", "## Costs", "## Ablation", "## Timings"):
        assert heading in readme, heading
    assert "seed 0" in readme and "official" in readme
    for plot in ("reliability", "sweep", "curves"):
        assert (out / "plots" / f"{plot}.png").stat().st_size > 1000, plot
    table3 = json.loads((out / "json" / "table3.json").read_text())
    assert table3 and {"a", "b", "difference"} <= set(table3[0])
    assert json.loads((out / "json" / "split_summary.json").read_text())
    ablation = json.loads((out / "json" / "ablation.json").read_text())
    assert {r["variant"] for r in ablation} == {"full", "simple", "next"} and "tau2/retail" in {r["domain"] for r in ablation}
    assert (out / "split.json").is_file()


@full_data
def test_a_missing_data_folder_is_a_clear_error(tmp_path, capsys) -> None:
    assert main(["bench", "--quick", "--no-progress", "--data", str(tmp_path / "nowhere"),
                 "--out", str(tmp_path / "out")]) == 2
    assert "no such data folder" in capsys.readouterr().err
