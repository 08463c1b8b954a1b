"""The house: imports go one way down the stages, no circles, one public API with docstrings."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import stretto_core

PACKAGE = Path(stretto_core.__file__).parent
STAGES = ["version", "errors", "paths", "private", "progress", "sessions", "learn", "flow", "serve", "procedures", "evaluate", "demo", "cli"]
"""Each stage may import only itself and the stages before it."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every stretto_core module a file imports, at any depth of the file (lazy imports count)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("stretto_core"):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if module_file(candidate) else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("stretto_core"))
    return found


def module_file(name: str) -> Path | None:
    base = PACKAGE.parent.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def stage_of(name: str) -> int | None:
    parts = name.split(".")
    if len(parts) < 2:
        return None  # the public API at the top imports from every stage, lazily
    return STAGES.index(parts[1]) if parts[1] in STAGES else None


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in PACKAGE.rglob("*.py")}


def test_every_module_belongs_to_a_stage():
    strays = [m for m in graph() if m not in ("stretto_core", "stretto_core.__main__") and stage_of(m) is None]
    assert strays == []


def test_no_module_imports_a_later_stage():
    upward = []
    for module, deps in graph().items():
        mine = stage_of(module)
        if mine is None:
            continue
        upward += [f"{module} -> {dep}" for dep in deps
                   if dep != "stretto_core" and (stage_of(dep) or 0) > mine]
    assert upward == []


def test_no_module_imports_the_public_api_from_inside():
    inside = [m for m, deps in graph().items() if m != "stretto_core" and "stretto_core" in deps]
    assert inside == []


def test_there_is_no_import_circle():
    edges = graph()
    circles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(edges.get(node, ())):
            if dep not in edges:
                continue
            if state.get(dep) == 1:
                circles.append(path[path.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, path + [dep])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_the_checks_above_would_see_an_upward_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from stretto_core.serve.engine import Engine\n")
    assert imports_of(probe) == {"stretto_core.serve.engine"}
    assert stage_of("stretto_core.serve.engine") > stage_of("stretto_core.sessions.model")


def test_every_public_name_resolves_and_says_why():
    missing = []
    for name in stretto_core.__all__:
        value = getattr(stretto_core, name)
        doc = inspect.getdoc(value) if (inspect.isclass(value) or inspect.isfunction(value)) else None
        if not doc or not doc.strip():
            missing.append(name)
    assert missing == []


def test_importing_the_public_api_loads_no_heavy_module():
    import subprocess
    import sys

    code = ("import sys, stretto_core; stretto_core.Stretto; "
            "print(','.join(m for m in ('matplotlib', 'scipy', 'numpy', 'tau2', 'agentdojo') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == ""


def test_no_file_is_named_after_a_stage_prefix():
    prefixed = [p.name for p in PACKAGE.rglob("*.py") if p.stem.startswith(("replay_", "bindings_", "flow_"))]
    assert prefixed == []


def test_public_names_come_from_their_stage():
    for name in stretto_core.__all__:
        module = getattr(stretto_core, name).__module__
        assert importlib.import_module(module) is not None
        assert stage_of(module) is not None, f"{name} lives in {module}, outside every stage"
