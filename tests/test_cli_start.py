"""The CLI starts fast: verbs are listed from a table and load only when they run."""

from __future__ import annotations

import subprocess
import sys

from stretto_core.cli import load_verb, main, verb_modules
from stretto_core.cli.verbs import VERBS


def test_every_verb_a_module_registers_is_in_the_table_under_that_module():
    registered = {name: module for module in verb_modules() for name in load_verb(module)}
    assert registered == {name: module for name, (module, _) in VERBS.items()}


def test_the_help_lists_every_verb(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in VERBS)


def test_starting_the_cli_imports_no_heavy_module():
    code = ("import sys; from stretto_core.cli import main; main(['--help']); "
            "print(','.join(m for m in ('matplotlib', 'scipy', 'numpy', 'tau2', 'agentdojo', 'tqdm') if m in sys.modules),"
            " file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr.strip() == ""


def test_an_unknown_verb_is_a_usage_error(capsys):
    assert main(["no-such-verb"]) == 2
    assert "no verb" in capsys.readouterr().err
