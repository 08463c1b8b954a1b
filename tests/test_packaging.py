"""What a user meets first is in order: the license, the metadata, `import stretto`, the version,
the typed marker in every package, the verbs grouped, and shell completion."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

from shared_data import published_data

import stretto
import stretto_core
from stretto_core.cli import main, render_help
from stretto_core.cli.verbs import RESEARCH, VERBS

REPO = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
PACKAGES = [REPO / "stretto", REPO / "stretto_core", *sorted((REPO / "adapters").glob("stretto_*"))]


def test_the_repository_and_the_wheel_carry_the_mit_license():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]


def test_the_classifiers_name_the_python_versions_requires_python_allows_and_say_typed():
    classifiers = PROJECT["classifiers"]
    assert "Typing :: Typed" in classifiers and "Operating System :: OS Independent" in classifiers
    floor = int(PROJECT["requires-python"].removeprefix(">=3."))
    minors = sorted(int(c.rsplit(".", 1)[1]) for c in classifiers
                    if c.startswith("Programming Language :: Python :: 3.") and c.count(".") == 1)
    assert minors[0] == floor and minors == list(range(floor, minors[-1] + 1))
    assert PROJECT["keywords"] and PROJECT["description"]


def test_every_package_ships_its_typed_marker():
    assert [p.name for p in PACKAGES if not (p / "py.typed").is_file()] == []
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "py.typed" in setuptools["package-data"]["*"]
    assert "stretto" in setuptools["packages"]["find"]["include"]


def test_import_stretto_gives_the_public_api_and_the_installed_version():
    assert stretto.__version__ == stretto_core.__version__ == version("stretto")
    assert stretto.Stretto is stretto_core.Stretto and stretto.load_flow is stretto_core.load_flow
    assert set(stretto_core.__all__) <= set(stretto.__all__)


def _type_checked_names(path: Path) -> set[str]:
    """The names a module imports under `if TYPE_CHECKING:` (what type checkers see)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom):
                    names.update(alias.asname or alias.name for alias in inner.names)
    return names


def test_type_checkers_see_every_public_name_the_lazy_facades_give():
    public = set(stretto_core.__all__)
    for facade in (REPO / "stretto_core" / "__init__.py", REPO / "stretto" / "__init__.py"):
        seen = _type_checked_names(facade)
        assert seen == public, (f"{facade.relative_to(REPO)}: under `if TYPE_CHECKING:` add "
                                f"{sorted(public - seen)}, drop {sorted(seen - public)} "
                                "(`from MODULE import NAME as NAME`, as the names in _WHERE)")


def test_stretto_version_prints_the_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"stretto {stretto_core.__version__}"


def test_the_help_lists_the_research_verbs_apart_from_the_ones_a_user_runs():
    text = render_help()
    user, research = text.split("Research (")
    assert all(f"  {verb} " in research for verb in RESEARCH)
    assert all(f"  {verb} " in user for verb in set(VERBS) - RESEARCH)
    assert {"learn", "replay", "proxy", "flow", "demo", "ingest", "doctor"}.isdisjoint(RESEARCH)
    assert RESEARCH <= set(VERBS)


def test_the_completion_script_is_printed_and_completes_verbs_and_a_verbs_options():
    assert main(["--show-completion", "bash"]) == 0
    assert main(["--show-completion", "tcsh"]) == 2

    def complete(words: str) -> list[str]:
        env = {**os.environ, "_STRETTO_COMPLETE": "bash_complete", "COMP_WORDS": words,
               "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))}
        done = subprocess.run([sys.executable, "-m", "stretto_core"], env=env, capture_output=True, text=True)
        return [line.split(",", 1)[1] for line in done.stdout.splitlines()]

    assert complete("stretto le") == ["learn"]
    assert "--app" in complete("stretto learn --")


def test_the_core_install_needs_no_numeric_stack_and_the_test_install_has_it():
    core = " ".join(PROJECT["dependencies"])
    assert not any(name in core for name in ("numpy", "scipy", "matplotlib"))
    extras = PROJECT["optional-dependencies"]
    assert any(d.startswith("numpy") for d in extras["features"])
    assert {"numpy", "matplotlib"} <= {d.split(">")[0] for d in extras["bench"]}
    assert "stretto[bench,features]" in extras["test"]


@published_data  # the sample of published runs, cut into tests/fixtures/data when the data is there
def test_json_dash_writes_the_verbs_json_alone_to_stdout(tmp_path, capfd):
    import json

    runs = REPO / "tests" / "fixtures" / "data" / "tau2" / "trajectories"
    assert main(["ingest", "tau2", str(runs), "--out", str(tmp_path / "sessions"), "--json", "-"]) == 0
    out, err = capfd.readouterr()
    summary = json.loads(out)  # stdout is the JSON and nothing else
    assert summary and "wrote" not in out and err  # the human summary went to stderr
    assert main(["ceiling", str(tmp_path / "sessions"), "--json=-"]) == 0
    assert json.loads(capfd.readouterr().out)
