"""A Ray cluster started before a timed learn and stopped after it, as a deployment keeps one up.

A deployment that learns on Ray keeps its cluster running; starting one (3.7-6.1 s on 2 cores)
and stopping it (1.3 s) is not a learn's cost there. `learn_distributed.py`'s `ray-running` way
starts a head here (`ray start --head --block`, outside any timing), hands its address to each
learn, and stops it by ending the process it started (never `ray stop`, which would stop every
Ray of this user on a shared machine).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path
from typing import IO, Any

READY = "Ray runtime started"
"""What `ray start --head` prints once the head takes connections."""


def ray_command(python: str) -> str:
    """The `ray` command installed beside `python` (the venv that imports ray)."""
    return str(Path(python).parent / "ray")


def free_port() -> int:
    """A port nobody listens on now, so this head never joins another helper's cluster."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cluster_env(code_dir: Path | None) -> dict[str, str]:
    """The environment of the head and of every learn that connects to it: the workers import the
    code being measured, and no token is asked (a stale `~/.ray/auth_token` would refuse the learn)."""
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    if code_dir is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code_dir), str(code_dir / "adapters")])
    return env


def head_args(python: str, port: int, cpus: int) -> list[str]:
    return [ray_command(python), "start", "--head", "--block", f"--port={port}", f"--num-cpus={cpus}",
            "--include-dashboard=false", "--disable-usage-stats"]


class RunningRay:
    """`with RunningRay(python, code_dir) as ray:` a head of `cpus` CPUs at `ray.address`."""

    def __init__(self, python: str, code_dir: Path | None, cpus: int = 2, wait_s: float = 120.0) -> None:
        self.python, self.code_dir, self.cpus, self.wait_s = python, code_dir, cpus, wait_s
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.start_s = 0.0
        """Wall seconds the head took to start (outside every learn's timing, said apart)."""
        self._process: subprocess.Popen[str] | None = None
        self._log: IO[str] | None = None

    def __enter__(self) -> "RunningRay":
        started = time.perf_counter()
        log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"running-ray-{self.port}.log"
        self._log = open(log_path, "w+", encoding="utf-8")
        self._process = subprocess.Popen(head_args(self.python, self.port, self.cpus), env=cluster_env(self.code_dir),
                                         stdout=self._log, stderr=subprocess.STDOUT, text=True)
        while READY not in log_path.read_text(encoding="utf-8", errors="replace"):
            if self._process.poll() is not None or time.perf_counter() - started > self.wait_s:
                self.__exit__()
                raise SystemExit(f"ray head did not start: see {log_path}")
            time.sleep(0.1)
        self.start_s = time.perf_counter() - started
        return self

    def __exit__(self, *exc: Any) -> None:
        """Ends the head this made (it drains, then stops the processes it started)."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None
