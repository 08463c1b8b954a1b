"""What installing stretto weighs and what its cold start costs, before ⇒ after, in fresh venvs.

    python3 benchmarks/footprint.py [--before REV] [--extra openai-agents] [--runs 7] [--json OUT]
    .venv/bin/python benchmarks/footprint.py --quick [--before REV] [--runs 15] [--json OUT]

Builds fresh virtual environments side by side: stretto at `--before` (a git revision, default
the commit this work started from) and at the working tree, each plain (`pip install DIR`) and
with one SDK extra (`DIR[EXTRA]`), and one with the SDK alone, so "beyond its SDK" is measured
against the same SDK install. For each it prints:

  * installed size: the venv's site-packages, in MB (pip's own files subtracted);
  * cold-start CPU, as ratios to `import pydantic` in the same venv: `import stretto_core;
    stretto_core.Stretto` (what an adapter's cold start pays) and `stretto learn --help`.

CPU is the child's user+system time (resource.getrusage), the median of `--runs` fresh
processes, the commands interleaved so the machine's load falls on all alike, with bytecode
cached as a user's would be (PYTHONDONTWRITEBYTECODE is dropped for the children). Needs network or
a wheel cache for the installs; fails loudly if an install or a command fails.

`--quick` measures CPU only, with no installs: both trees run under the interpreter running this
script (a venv holding stretto's dependencies), each tree first on PYTHONPATH, and adds
`Stretto(flow)`: the import and the construction of a `Stretto` serving the τ² retail fixture
flow (what an adapter pays before its first call, with everything deferred at import paid).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BEFORE = "b7c779d"
"""main when issue 28's work started: numpy, scipy and matplotlib in the core install."""

SDK_OF = {"openai-agents": "openai-agents", "adk": "google-adk", "langgraph": "langgraph",
          "claude": "claude-agent-sdk", "mcp": "mcp"}
"""Each extra's SDK, installed alone for the baseline (the extra's floor comes from pyproject)."""

COMMANDS = {
    "pydantic": ["{python}", "-c", "import pydantic"],
    "Stretto": ["{python}", "-c", "import stretto_core; stretto_core.Stretto"],
    "learn --help": ["{bin}/stretto", "learn", "--help"],
}

FIXTURE_FLOW = "tests/fixtures/flows/tau2-retail.flow.json"
QUICK_COMMANDS = {
    "pydantic": ["{python}", "-c", "import pydantic"],
    "Stretto": ["{python}", "-c", "import stretto_core; stretto_core.Stretto"],
    "Stretto(flow)": ["{python}", "-c", "import stretto_core; stretto_core.Stretto('{tree}/" + FIXTURE_FLOW + "', "
                      "reads=['get_order_details', 'get_user_details'], store=False)"],
    "learn --help": ["{python}", "-m", "stretto_core", "learn", "--help"],
}
"""The commands of `--quick`, each tree on PYTHONPATH ({tree}, {tree}/adapters)."""


USER_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
"""A user's environment: bytecode is cached (as after any first run), no repository on the path."""


def run(argv: list[str], **kwargs: object) -> None:
    kwargs.setdefault("env", USER_ENV)
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise SystemExit(f"footprint: {' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")


def checkout(rev: str, into: Path) -> Path:
    """The repository's files at `rev`, exported into `into` (no .git)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def venv(at: Path, requirement: str | None) -> Path:
    """A fresh venv at `at` with `requirement` installed (None: nothing but pip)."""
    run([sys.executable, "-m", "venv", str(at)])
    if requirement is not None:
        run([str(at / "bin" / "python"), "-m", "pip", "install", "-q", requirement],
            env={**USER_ENV, "PYTHONWARNINGS": "ignore"})
    return at


def site_packages(at: Path) -> Path:
    return next((at / "lib").glob("python3*/site-packages"))


def megabytes(path: Path) -> float:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            if not os.path.islink(full):
                total += os.path.getsize(full)
    return total / 1e6


def installed_mb(at: Path, empty_mb: float) -> float:
    """site-packages, less what an empty venv's (pip itself) holds."""
    return megabytes(site_packages(at)) - empty_mb


def cpu_of(argv: list[str], **kwargs: object) -> float:
    """The CPU seconds (user + system) one fresh process of `argv` takes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run(argv, **kwargs)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cold_start(at: Path, runs: int) -> dict[str, float]:
    """Median CPU of each command in the venv at `at`, interleaved over `runs` rounds."""
    spelled = {name: [part.format(python=at / "bin" / "python", bin=at / "bin") for part in argv]
               for name, argv in COMMANDS.items()}
    samples: dict[str, list[float]] = {name: [] for name in spelled}
    for name, argv in spelled.items():  # one warm-up each (the .pyc files are written once)
        cpu_of(argv)
    for _ in range(runs):
        for name, argv in spelled.items():
            samples[name].append(cpu_of(argv))
    return {name: statistics.median(values) for name, values in samples.items()}


def quick(trees: dict[str, Path], runs: int) -> list[dict[str, object]]:
    """CPU medians of QUICK_COMMANDS for each tree, all interleaved, under this interpreter."""
    spelled = {(side, name): [part.format(python=sys.executable, tree=tree) for part in argv]
               for side, tree in trees.items() for name, argv in QUICK_COMMANDS.items()}
    envs = {side: {**USER_ENV, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'adapters'}"} for side, tree in trees.items()}
    for (side, _), argv in spelled.items():
        where = subprocess.run([sys.executable, "-c", "import stretto_core; print(stretto_core.__file__)"],
                               env=envs[side], capture_output=True, text=True, cwd=trees[side]).stdout.strip()
        if not where.startswith(str(trees[side])):
            raise SystemExit(f"footprint: the {side} tree is not the one imported ({where})")
        cpu_of(argv, env=envs[side], cwd=trees[side])  # warm-up: bytecode written once
    samples: dict[tuple[str, str], list[float]] = {key: [] for key in spelled}
    for _ in range(runs):
        for (side, name), argv in spelled.items():
            samples[(side, name)].append(cpu_of(argv, env=envs[side], cwd=trees[side]))
    rows = []
    for side in trees:
        cpu = {name: statistics.median(samples[(side, name)]) for name in QUICK_COMMANDS}
        rows.append({"side": side, "cpu_s": {k: round(v, 4) for k, v in cpu.items()},
                     **{f"{name} ÷ pydantic": round(cpu[name] / cpu["pydantic"], 2)
                        for name in QUICK_COMMANDS if name != "pydantic"}})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="the git revision to compare with")
    parser.add_argument("--extra", default="openai-agents", choices=sorted(SDK_OF))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="CPU only, no installs (see the docstring)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="stretto-footprint-"))
    try:
        trees = {"before": checkout(args.before, work / "src-before"), "after": checkout("HEAD", work / "src-after")}
        # the working tree's uncommitted changes count as "after": copy them over the export
        for path in subprocess.run(["git", "-C", str(REPO), "ls-files", "-m", "-o", "--exclude-standard"],
                                   capture_output=True, text=True, check=True).stdout.split():
            source = REPO / path
            if source.is_file():
                (trees["after"] / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, trees["after"] / path)
        if args.quick:
            rows_q = quick(trees, args.runs)
            names = [n for n in QUICK_COMMANDS if n != "pydantic"]
            print(f"before = {args.before}, after = the working tree; CPU medians of {args.runs} interleaved runs "
                  f"under {sys.executable}")
            print("| side | CPU `import pydantic` s | " + " | ".join(f"{n} ÷ pydantic" for n in names) + " |")
            print("|---|---:|" + "---:|" * len(names))
            for r in rows_q:
                cpu = r["cpu_s"]
                assert isinstance(cpu, dict)
                print(f"| {r['side']} | {cpu['pydantic']:.3f} | " + " | ".join(f"{r[n + ' ÷ pydantic']:.2f}×"
                                                                           for n in names) + " |")
            if args.json is not None:
                args.json.write_text(json.dumps({"before": args.before, "runs": args.runs, "rows": rows_q},
                                                indent=1) + "\n")
            return
        empty = megabytes(site_packages(venv(work / "empty", None)))
        sdk = installed_mb(venv(work / "sdk", SDK_OF[args.extra]), empty)
        rows = []
        for side, tree in trees.items():
            for extra in (None, args.extra):
                at = venv(work / f"{side}-{extra or 'core'}", f"{tree}[{extra}]" if extra else str(tree))
                size = installed_mb(at, empty)
                cpu = cold_start(at, args.runs)
                rows.append({"side": side, "install": f"stretto[{extra}]" if extra else "stretto",
                             "installed_mb": round(size, 1),
                             "beyond_sdk_mb": round(size - sdk, 1) if extra else None,
                             "cpu_s": {k: round(v, 4) for k, v in cpu.items()},
                             "stretto_ratio": round(cpu["Stretto"] / cpu["pydantic"], 2),
                             "learn_help_ratio": round(cpu["learn --help"] / cpu["pydantic"], 2)})
        print(f"{SDK_OF[args.extra]} alone: {sdk:.1f} MB installed; before = {args.before}, after = the working tree")
        print(f"| install | side | installed MB | beyond the SDK MB | CPU `import pydantic` s "
              f"| Stretto ÷ pydantic | learn --help ÷ pydantic |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for r in rows:
            beyond = "–" if r["beyond_sdk_mb"] is None else f"{r['beyond_sdk_mb']:.1f}"
            print(f"| {r['install']} | {r['side']} | {r['installed_mb']:.1f} | {beyond} | {r['cpu_s']['pydantic']:.3f} "
                  f"| {r['stretto_ratio']:.2f}× | {r['learn_help_ratio']:.2f}× |")
        if args.json is not None:
            args.json.write_text(json.dumps({"sdk": SDK_OF[args.extra], "sdk_mb": round(sdk, 1),
                                             "before": args.before, "rows": rows}, indent=1) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
