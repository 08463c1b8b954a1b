"""An adapter's cold start: `from stretto_core import Stretto` loads none of the serving machinery
(pydantic, the models, the engine); constructing a `Stretto` loads it once, without the ingest
package or yaml. CPU before ⇒ after: `.venv/bin/python benchmarks/footprint.py --quick`."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOW = ROOT / "tests" / "fixtures" / "flows" / "tau2-retail.flow.json"


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    probe = code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_stretto_loads_no_model_no_engine_and_not_pydantic() -> None:
    modules = loaded_after("import stretto_core; stretto_core.Stretto")
    heavy = {"pydantic", "yaml", "asyncio", "stretto_core.flow.ir", "stretto_core.serve.engine",
             "stretto_core.sessions.model", "stretto_core.sessions.manifest", "stretto_core.serve.options"}
    assert "stretto_core.serve.live" in modules and modules & heavy == set()


def test_a_served_stretto_loads_neither_the_ingest_package_nor_yaml() -> None:
    modules = loaded_after(f"import stretto_core; s = stretto_core.Stretto({str(FLOW)!r}, "
                           "reads=['get_order_details'], store=False); assert s.flow is not None")
    assert "stretto_core.serve.engine" in modules  # it did load what serving needs
    assert not any(m == "yaml" or m.startswith("stretto_core.sessions.ingest") for m in modules)


def test_stretto_defaults_are_the_options_defaults() -> None:
    from stretto_core.serve import defaults, lookups, speculator
    from stretto_core.serve.live import Stretto
    from stretto_core.serve.options import StrettoOptions

    signature = inspect.signature(Stretto.__init__).parameters
    for name, field in StrettoOptions.model_fields.items():
        assert signature[name].default == field.default, name
    assert speculator.DEFAULT_THETA is defaults.DEFAULT_THETA and lookups.LOOKUP_TIMEOUT is defaults.LOOKUP_TIMEOUT


def test_a_yaml_result_still_parses_after_yaml_became_lazy() -> None:
    from stretto_core.sessions.values import parse_result

    assert parse_result("order: W1\nitems:\n  - a\n  - b") == {"order": "W1", "items": ["a", "b"]}
    assert type(parse_result("key: [unclosed")).__name__ == "TextResult"
