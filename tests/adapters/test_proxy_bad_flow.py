"""`stretto proxy --flow F` with a flow that cannot be read says so in one line naming the file
and exits 2, with no traceback (issue 26, item 8): a folder, a binary file, JSON nested too deeply."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from proxy_support import proxy_command, toy_server_command  # noqa: E402
from stretto_mcp.scripted import same_code_env  # noqa: E402


def bad_flow(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / "bad.flow.json"
    if kind == "folder":
        path.mkdir()
    elif kind == "binary":
        path.write_bytes(bytes(range(256)) * 4)
    else:
        path.write_text("[" * 100_000)
    return path


@pytest.mark.parametrize("kind", ["folder", "binary", "too deep"])
def test_an_unreadable_flow_is_one_line_naming_it_and_exit_2(tmp_path: Path, kind: str) -> None:
    flow = bad_flow(tmp_path, kind)
    command = proxy_command(toy_server_command(), "--flow", str(flow), "--store", str(tmp_path / "sessions"))
    with open("/dev/null", "rb") as stdin:
        done = subprocess.run(command, stdin=stdin, capture_output=True, env=same_code_env(), timeout=60)
    err = done.stderr.decode()
    assert done.returncode == 2, err[-800:]
    assert "Traceback" not in err
    [line] = [ln for ln in err.splitlines() if ln.strip()]
    assert line.startswith("stretto proxy: ") and str(flow) in line
