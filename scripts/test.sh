#!/usr/bin/env bash
# Sets up .venv (stretto, its test tools, and the benchmark environments) and runs the tests.
# Extra arguments go to pytest. This is the command the README gives and CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"
PYTHON=.venv/bin/python bash scripts/install-envs.sh
exec .venv/bin/python -m pytest "$@"
