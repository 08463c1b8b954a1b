"""Two commits' code measured side by side in one run: before → after, in CPU time, with the load.

A benchmark that shows what a change bought runs the same probe (a short Python program that
prints one JSON line) under two checkouts at once: this one, and another commit's code checked
out with `git worktree` into a temporary folder. Each round starts both probes together, so the
machine's other jobs weigh on both alike; the ratio of their CPU times is what counts, not
either time alone (a shared machine's absolute times move with its load).

    with checkout("HEAD~1") as before:
        rounds = side_by_side(PROBE, ["arg"], before, rounds=3)

`flows_identical` compares two flow files byte for byte (a speed-up must not move a flow).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, Sequence

HERE = Path(__file__).resolve().parents[1]
"""This checkout (the code being measured as "after")."""


@contextlib.contextmanager
def checkout(rev: str | Path) -> Iterator[Path]:
    """The code of `rev` (a commit, branch or tag; or a folder holding a checkout already) in a
    folder, for as long as the block runs; a worktree made here is removed afterwards."""
    if isinstance(rev, Path) or Path(str(rev)).is_dir():
        yield Path(rev).resolve()
        return
    tmp = Path(tempfile.mkdtemp(prefix="stretto-before-"))
    target = tmp / "code"
    made = subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", "-q", str(target), str(rev)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise SystemExit(f"side_by_side: cannot check out {rev}: {made.stderr.strip()}")
    try:
        yield target
    finally:
        subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(target)], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def describe(rev: str | Path) -> str:
    """`rev` as a short commit id and subject (or the folder, when it is one)."""
    if Path(str(rev)).is_dir():
        return str(rev)
    got = subprocess.run(["git", "-C", str(HERE), "log", "-1", "--format=%h %s", str(rev)],
                         capture_output=True, text=True)
    return got.stdout.strip()[:100] or str(rev)


def start(code: Path, probe: str, args: Sequence[str]) -> subprocess.Popen:
    """`probe` run by `code`'s stretto (its folders first on the path), started, under `nice`."""
    from stretto_core.paths import data_root

    # the data as this checkout finds it: a probe runs in the other checkout's folder, where a
    # relative ../shared is not there (without it the sessions would carry no split labels)
    env = {**os.environ, "STRETTO_PROGRESS": "0", "STRETTO_DATA": str(data_root().resolve()),
           "PYTHONPATH": os.pathsep.join([str(code), str(code / "adapters"), str(HERE / "benchmarks")])}
    return subprocess.Popen(["nice", sys.executable, "-c", probe, *map(str, args)], cwd=code, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, who: str) -> dict:
    """The JSON line a probe printed last; a probe that failed stops the benchmark, loudly."""
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"side_by_side: the {who} probe failed:\n{stderr[-3000:]}")
    lines = [line for line in stdout.strip().splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"side_by_side: the {who} probe printed no JSON:\n{stdout[-1000:]}\n{stderr[-1000:]}")
    return json.loads(lines[-1])


def side_by_side(probe: str, args: Sequence[str], before: Path, rounds: int = 3) -> list[dict]:
    """`rounds` rounds of the probe, before's and this checkout's started together each round:
    [{"before": …, "after": …}, …]. `{who}` in an argument becomes `before` or `after` (files of
    their own)."""
    out = []

    def own(who: str) -> list[str]:
        return [str(a).replace("{who}", who) for a in args]

    for _ in range(rounds):
        procs = {"before": start(before, probe, own("before")), "after": start(HERE, probe, own("after"))}
        out.append({who: finish(proc, who) for who, proc in procs.items()})
    return out


def best(rounds: list[dict], who: str, key: str) -> float:
    """The quickest (smallest) `key` of `who` over the rounds (the round least disturbed)."""
    return min(r[who][key] for r in rounds)


def ratio_median(rounds: list[dict], key: str) -> float:
    """The median over rounds of before's `key` over after's (above 1: after is quicker)."""
    ratios = sorted(r["before"][key] / r["after"][key] for r in rounds if r["after"][key] > 0)
    return ratios[len(ratios) // 2] if ratios else float("nan")


def run_summary(before: str, load: str, rounds: list[dict], **fields: object) -> dict:
    """What every side-by-side run's JSON holds: the code compared against, the load at the start,
    each round, and the Python; `fields` are the benchmark's own."""
    return {"before": describe(before), "load_at_start": load, "rounds": rounds, **fields,
            "python": sys.version.split()[0]}


def load_note() -> str:
    """The machine's load averages, said with every timing (it is shared)."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load unknown"
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def flows_identical(a: str | Path, b: str | Path) -> bool:
    """Two flow files hold the same bytes."""
    return Path(a).read_bytes() == Path(b).read_bytes()


RETAIL = r"""
import shutil, sys, tempfile
from pathlib import Path
from stretto_core.sessions.ingest import ingest_files
from stretto_core.sessions.splits import split_of
from stretto_core.sessions.store import load_sessions
_store = tempfile.mkdtemp()
ingest_files("tau2", [Path(sys.argv[1])], Path(_store))  # written and read by this checkout's own code
_sessions = load_sessions([Path(_store)])
shutil.rmtree(_store)
train = [s for s in _sessions if split_of(s.header) == "train"]
test = [s for s in _sessions if split_of(s.header) == "test"]
"""
"""The start of a probe on τ² retail: the trajectories (its first argument) ingested by the probe's
own checkout (session and flow formats differ between commits), `train` and `test` sessions."""


def retail_source() -> Path:
    """The τ² retail trajectories in STRETTO_DATA (a probe's first argument with `RETAIL`)."""
    from stretto_core.paths import data_root

    return data_root() / "tau2" / "trajectories" / "retail"


def parser(doc: str, out: str, rounds: int) -> argparse.ArgumentParser:
    """A side-by-side benchmark's options: `--before`, `--rounds`, `--out`."""
    made = argparse.ArgumentParser(description=doc.splitlines()[0])
    made.add_argument("--before", default="HEAD~1", help="the commit (or a checkout's folder) to compare with")
    made.add_argument("--rounds", type=int, default=rounds)
    made.add_argument("--out", default=out)
    return made
