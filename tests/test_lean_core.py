"""The core a user installs stays light: serving, recording and learning run with numpy, scipy
and matplotlib absent (they are the `features` and `bench` extras), and the core imports no
adapter (issue 28, item 1)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from shared_data import published_data

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "scipy", "matplotlib")
ADAPTERS = sorted(p.name for p in (REPO / "adapters").glob("stretto_*"))

WITHOUT_NUMERICS = f'''
import sys
class Absent:
    """Every import of the numeric stack fails, as in an install without the extras."""
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {HEAVY!r}:
            raise ImportError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Absent())
from stretto_core.cli import main
raise SystemExit(main(sys.argv[1:]))
'''


def stretto_without_numerics(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "lean.py"
    script.write_text(WITHOUT_NUMERICS, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "adapters")]),
           "STRETTO_HOME": str(tmp_path / ".stretto")}
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=600)


@published_data  # ingests the published sample, cut into tests/fixtures/data when the data is there
def test_a_user_records_learns_shows_and_replays_without_numpy_scipy_or_matplotlib(tmp_path):
    runs = REPO / "tests" / "fixtures" / "data" / "tau2" / "trajectories"
    steps = [
        ["ingest", "tau2", str(runs), "--out", "sessions"],
        ["learn", "sessions", "--split", "all", "--out", "app.flow.json"],
        ["flow", "show", "app.flow.json"],
        ["replay", "--flow", "app.flow.json", "--sessions", "sessions", "--split", "all", "--json", "replay.json"],
        ["ceiling", "sessions"],
        ["demo", "--harness", "builtin", "--home", "demo", "--sessions", "10", "--train", "6"],
    ]
    for step in steps:
        done = stretto_without_numerics(tmp_path, *step)
        assert done.returncode == 0, f"stretto {' '.join(step)}:\n{done.stderr[-2000:]}"
    assert (tmp_path / "app.flow.json").stat().st_size > 0 and (tmp_path / "replay.json").stat().st_size > 0


@published_data  # ingests the published sample, cut into tests/fixtures/data when the data is there
def test_learning_result_features_without_numpy_says_which_extra_in_one_line(tmp_path):
    runs = REPO / "tests" / "fixtures" / "data" / "tau2" / "trajectories"
    assert stretto_without_numerics(tmp_path, "ingest", "tau2", str(runs), "--out", "sessions").returncode == 0
    done = stretto_without_numerics(tmp_path, "learn", "sessions", "--split", "all", "--features", "--out", "f.json")
    assert done.returncode == 2
    assert done.stderr.strip() == 'stretto: learning result features (--features) needs numpy: pip install "stretto[features]"'


def test_no_core_module_imports_an_adapter():
    found = []
    for path in sorted((REPO / "stretto_core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] in ADAPTERS]
    # the proxy verb starts the proxy adapter on the user's command: the CLI's one door into it
    assert [f for f in found if not f.startswith("stretto_core/cli/commands/proxy.py")] == []
