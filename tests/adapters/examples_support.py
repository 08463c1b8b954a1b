"""The repository's runnable examples, imported as modules (each under a name of its own)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str, prefix: str = "example") -> ModuleType:
    """`examples/<name>.py` loaded as the module `<prefix>_<name>`."""
    spec = importlib.util.spec_from_file_location(f"{prefix}_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
