#!/usr/bin/env bash
# Writes every output the restructure must keep byte-identical: sessions ingested from the shared
# τ²-bench, AgentDojo and WorkBench data, a flow per app learned from the train split, the test
# split replayed on each, and `stretto bench`'s JSON rows. Run it on two checkouts and diff.
# Usage: scripts/identity-check.sh OUT [STRETTO_COMMAND]
set -euo pipefail
out="$1"; stretto="${2:-stretto}"
data="${STRETTO_DATA:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}"
rm -rf "$out"; mkdir -p "$out"
$stretto ingest tau2 "$data/tau2/trajectories" --out "$out/sessions/tau2" >/dev/null
$stretto ingest agentdojo "$data/agentdojo/runs" --out "$out/sessions/agentdojo" >/dev/null
$stretto ingest workbench "$data/workbench/results" --out "$out/sessions/workbench" >/dev/null
for source in tau2 agentdojo workbench; do
  $stretto learn "$out/sessions/$source" --split train --out "$out/$source.flow.json" >/dev/null
  $stretto replay --flow "$out/$source.flow.json" --sessions "$out/sessions/$source" --split test \
    --json "$out/$source.replay.json" >/dev/null
done
$stretto bench --data "$data" --out "$out/bench" >/dev/null 2>&1
