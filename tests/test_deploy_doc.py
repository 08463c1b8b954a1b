"""docs/deploy.md as a user follows it: its commands run verbatim, in order, on sessions an app
recorded (no task ids), beside the app that keeps serving."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from app_sessions import app_stretto, serve_app
from stretto_core.cli import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "deploy.md"


def bash_blocks() -> list[list[str]]:
    return [[line.strip() for line in block.splitlines() if line.strip()]
            for block in re.findall(r"```bash\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)]


def test_the_deploy_page_commands_run_verbatim_in_order_on_an_apps_sessions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = app_stretto(Path("shop/flow.json"), Path("shop/sessions"))
    serve_app(app, range(10), "first")
    learn, versions = bash_blocks()
    assert learn == ["stretto learn shop/sessions --out shop/flow.json"]
    outputs = []
    for block, more in ((learn, range(10, 16)), (versions, ())):
        for line in block:
            words = shlex.split(line)
            assert words[0] == "stretto"
            code = main(words[1:])
            out, err = capsys.readouterr()
            assert code == 0, f"{line}: {err}"
            outputs.append(out)
        serve_app(app, more, "second")
    assert "split auto: 10 sessions with no task label, all learned from" in outputs[0]
    assert "6 new sessions added" in outputs[1] and "committed version 2" in outputs[2]
    assert "version 2 rolled back to 1" in outputs[4]
    assert Path("shop/flow.json").read_bytes() == Path("shop/history/v000001.flow.json").read_bytes()
    assert os.path.exists("shop/history/log.jsonl")
