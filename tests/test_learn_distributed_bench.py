"""`benchmarks/learn_distributed.py` measures a learn against a Ray head started before the timed
runs (`ray-running`), named by `--ways`, and stops only the head it started (issue 30, goal 6).
Ray is not in the test venv: a stand-in `ray` command plays the head."""

from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FAKE_RAY = """#!/bin/sh
echo "Local node IP: 127.0.0.1"
echo "Ray runtime started."
echo "$@" > "$(dirname "$0")/args"
env > "$(dirname "$0")/env"
exec sleep 600
"""


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import learn_distributed
    import running_ray

    return learn_distributed, running_ray


def _fake_python(tmp_path: Path) -> str:
    ray = tmp_path / "bin" / "ray"
    ray.parent.mkdir()
    ray.write_text(FAKE_RAY)
    ray.chmod(ray.stat().st_mode | stat.S_IXUSR)
    return str(tmp_path / "bin" / "python")


def test_a_way_not_measured_is_a_one_line_error(bench, capsys: pytest.CaptureFixture[str]) -> None:
    learn_distributed, _ = bench
    with pytest.raises(SystemExit) as exited:
        learn_distributed.main(["--ways", "ray-runing"])
    assert exited.value.code == 2
    assert "invalid choice: 'ray-runing'" in capsys.readouterr().err


def test_with_ray_importable_the_running_cluster_ways_are_measured(bench, monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    learn_distributed, _ = bench
    monkeypatch.setattr(learn_distributed, "imports_ray", lambda python: True)
    args = argparse.Namespace(before=tmp_path, ray_python="/venv/bin/python", ways=["ray-running-before"])
    chosen = learn_distributed.chosen(args, ROOT)
    assert [name for name, _, _ in chosen] == ["plain", "ray-running-before"]
    assert chosen[1][1:] == ("/venv/bin/python", tmp_path.resolve())
    assert learn_distributed.engine_of("ray-running-before") == "ray"


def test_the_head_is_started_with_the_code_measured_and_stopped_with_the_run(bench, tmp_path: Path) -> None:
    _, running_ray = bench
    with running_ray.RunningRay(_fake_python(tmp_path), ROOT, cpus=2, wait_s=30) as head:
        process = head._process
        assert process is not None and process.poll() is None
        assert head.address == f"127.0.0.1:{head.port}" and head.start_s > 0
    assert process.poll() is not None  # the head it started is gone, and only it
    said = (tmp_path / "bin" / "args").read_text()
    assert "start --head --block" in said and f"--port={head.port}" in said and "--num-cpus=2" in said
    env = dict(line.split("=", 1) for line in (tmp_path / "bin" / "env").read_text().splitlines() if "=" in line)
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT) and env["RAY_AUTH_MODE"] == "disabled"


def test_a_head_that_never_starts_is_a_clear_error(bench, tmp_path: Path) -> None:
    _, running_ray = bench
    python = _fake_python(tmp_path)
    Path(python).with_name("ray").write_text("#!/bin/sh\necho 'port taken' >&2\nexit 1\n")
    with pytest.raises(SystemExit, match="ray head did not start"):
        with running_ray.RunningRay(python, ROOT, wait_s=30):
            pass


def test_ray_workers_niceness_is_handed_to_every_ray_run(bench, monkeypatch: pytest.MonkeyPatch) -> None:
    learn_distributed, running_ray = bench
    monkeypatch.delenv("RAY_worker_niceness", raising=False)
    monkeypatch.setattr(learn_distributed, "measure", lambda args, tmp, base: [])
    monkeypatch.setattr(learn_distributed, "ingest_files", lambda *a: None)
    monkeypatch.setattr(learn_distributed, "write_summary", lambda *a: None)
    assert learn_distributed.main(["--ray-worker-niceness", "0"]) == 0
    assert running_ray.cluster_env(None)["RAY_worker_niceness"] == "0"  # Ray's own default is 15
