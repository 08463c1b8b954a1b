"""docs/privacy.md's commands run verbatim, in order, on sessions an app recorded (the built-in shop's)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from shop_sessions import shop_sessions
from stretto_core.sessions.store import write_session

PAGE = Path(__file__).resolve().parent.parent / "docs" / "privacy.md"


def commands() -> list[str]:
    block = re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)[0]
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_the_privacy_page_commands_run_verbatim_on_recorded_sessions(tmp_path: Path) -> None:
    for s in shop_sessions(30):
        write_session(s, tmp_path / "sessions")
    env = {**os.environ, "STRETTO_REDACT_KEY": "a key for the docs test only"}
    outputs = []
    for line in commands():
        argv = shlex.split(line)
        assert argv[0] == "stretto", line
        done = subprocess.run([sys.executable, "-m", "stretto_core", *argv[1:]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{line}\n{done.stderr[-1500:]}"
        outputs.append(done.stdout)
    assert "redacted 30 sessions" in outputs[0]
    assert (tmp_path / "review.html").read_text().count('class="site-row"') > 0
    assert outputs[-1].startswith("flowchart LR")
    assert "STRETTO_REDACT_KEY" not in "".join(outputs) and "a key for the docs test" not in "".join(
        p.read_text(errors="replace") for p in (tmp_path / "shared").glob("*"))
