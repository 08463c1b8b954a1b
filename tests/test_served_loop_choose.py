"""`benchmarks/served_loop_choose.py` chooses a served-loop variant by the paired score, leaving each
deployment out in turn, and adds up one variant's tallies over several cuts (`a.json+b.json`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CHOOSE = Path(__file__).resolve().parent.parent / "benchmarks" / "served_loop_choose.py"


def _paired_json(path: Path, off_by_deployment: dict[str, int], rounds: int = 5) -> Path:
    """A served_loop.py --paired --json output of rule `weighed` with so many rounds off per deployment."""
    rows = []
    for name, off in off_by_deployment.items():
        rows.append({"app": "app", "deployment": name, "rule": "weighed", "rounds": [
            {"verdict": {"saved": "off" if r < off else "within", "detours": "within"}, "point_within": r >= off}
            for r in range(rounds)]})
    path.write_text(json.dumps({"paired": rows}), encoding="utf-8")
    return path


def _choose(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CHOOSE), *args], capture_output=True, text=True, timeout=60)


def test_tallies_of_two_cuts_add_up_and_the_variant_steady_under_both_is_chosen(tmp_path: Path) -> None:
    steady2 = _paired_json(tmp_path / "s2.json", {"a": 1, "b": 1})
    steady3 = _paired_json(tmp_path / "s3.json", {"a": 1, "b": 1})
    lucky2 = _paired_json(tmp_path / "l2.json", {"a": 0, "b": 0})
    lucky3 = _paired_json(tmp_path / "l3.json", {"a": 3, "b": 3})
    run = _choose(f"steady={steady2}+{steady3}", f"lucky={lucky2}+{lucky3}")
    assert run.returncode == 0, run.stderr
    assert "| steady | 4 of 20 |" in run.stdout
    assert "| lucky | 6 of 20 |" in run.stdout
    assert "chosen on every deployment: steady" in run.stdout
    assert "left out in turn: 4 of 20 rounds off" in run.stdout


def test_one_cut_alone_would_choose_the_lucky_variant(tmp_path: Path) -> None:
    run = _choose(f"steady={_paired_json(tmp_path / 's.json', {'a': 1, 'b': 1})}",
                  f"lucky={_paired_json(tmp_path / 'l.json', {'a': 0, 'b': 0})}")
    assert run.returncode == 0, run.stderr
    assert "chosen on every deployment: lucky" in run.stdout


def test_a_file_that_is_not_json_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    good = _paired_json(tmp_path / "g.json", {"a": 0})
    run = _choose(f"x={bad}", f"y={good}")
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "bad.json" in run.stderr
