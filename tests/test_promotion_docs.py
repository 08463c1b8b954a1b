"""docs/promotion.md's commands run verbatim, in order, on sessions an app recorded (the built-in shop's)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from shop_sessions import shop_sessions
from stretto_core.flow.ir import load_flow
from stretto_core.sessions.store import write_session

PAGE = Path(__file__).resolve().parent.parent / "docs" / "promotion.md"


def commands() -> list[str]:
    block = re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)[0]
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_the_promotion_page_commands_run_verbatim_on_recorded_sessions(tmp_path: Path) -> None:
    sessions = shop_sessions(40)
    for s in sessions[:20]:
        write_session(s, tmp_path / "deploy" / "day1")
    for s in sessions[20:]:
        write_session(s, tmp_path / "deploy" / "shadow")
    outputs = []
    for line in commands():
        argv = shlex.split(line)
        if argv[0] == "stretto":
            argv = [sys.executable, "-m", "stretto_core", *argv[1:]]
        else:
            assert argv[0] == "cp", line
            shutil.copyfile(tmp_path / argv[1], tmp_path / argv[2])
            continue
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode in ((0, 1) if argv[3:5] == ["flow", "diff"] else (0,)), f"{line}\n{done.stderr[-1500:]}"
        outputs.append(done.stdout)
    assert any("20 clean sessions; set aside: 20 the flow learned from" in out for out in outputs)
    assert any("## Promotion" in out for out in outputs)
    assert load_flow(tmp_path / "deploy" / "strict.flow.json").promotion.held()
    assert "held back (no lookup)" in outputs[-1]
