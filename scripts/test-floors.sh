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
PYTHONWARNINGS="ignore::UserWarning" $venv/bin/python -m pip install -q -e ".[all,test]" -c requirements-floors.txt
$venv/bin/python -m pip freeze | grep -iE "^(openai-agents|google-adk|langgraph|langchain|langchain-core|claude-agent-sdk|mcp|fastmcp)==" 
exec $venv/bin/python -m pytest "${@:-tests/adapters}"
